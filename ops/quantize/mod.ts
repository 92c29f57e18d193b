/**
 * quantize: per-row absmax quantization of `[rows, cols]` f32 to int8 codes in [-127, 127] and one f32
 * scale per row (`quantize`, entry point `kernel`); `codes * scale` approximates the row. There is
 * no torch function for it; the arithmetic is torch's on float32 tensors except where stated.
 *
 * Conventions, and why:
 * - Symmetric [-127, 127] with no zero point: +-absmax map to +-127 exactly, and -128 is never
 *   produced, so a code's negation is a code.
 * - Rounding is Math.round's, ties toward +Infinity (2.5 -> 3, -2.5 -> -2), so a host-side
 *   quantizer written with Math.round agrees with this one; torch.round's ties-to-even and C's
 *   round-half-away-from-zero are both rejected by a test.
 * - The quotient `x * 127 / absmax` is rounded exactly, not as an f32 quotient (which would round
 *   x = f32(0.5 / 127) in a row with absmax 1 up to 1); the kernel does it in integer arithmetic on
 *   the bit patterns, so codes agree with the reference bit for bit on every device.
 * - `scale = absmax / 127` rounded to f32, as torch's division on a float32 tensor. WGSL allows its
 *   division 2.5 ULP, so every kernel computes the correctly rounded quotient in integer arithmetic
 *   instead (`exact_scale.wgsl`), and scales agree with the reference bit for bit too.
 * - A row of zeros gets scale 0 and codes 0, not NaN. Non-finite input is refused. Subnormal
 *   scales (absmax below 127 * 2^-126) may be flushed to 0 by the device.
 *
 * The portable kernel runs one workgroup per row (rows past 65,535 fold into y). On NVIDIA,
 * `kernel.nvidia` is resolved: a row of up to 8192 columns (a multiple of 4) is spread over the
 * fewest invocations (a power of two) that hold it in 8 vec4s each, so short rows share a
 * workgroup, and is held in registers: read from memory once, written as vec4s. It decides each
 * code from an f32 quotient, with an error bound that proves the rounding, one test per vec4, and
 * afterwards redoes the vec4s within 1e-4 of a tie (and rows whose absmax lies outside
 * [2^-100, 2^126]) with the portable kernel's exact integer division, reloaded from memory; an
 * integer division per element costs more instructions than streaming at the H200's bandwidth
 * leaves time for. Codes agree bit for bit either way. Longer or misaligned rows take one
 * workgroup each and read the row twice.
 *
 * On the H200 it reaches 85-86% of the bandwidth roofline at 8192 x 8192 and 32768 x 2048 (42% at
 * 2048 x 2048); those figures and the designs it was measured against are in
 * `harness/baselines/nvidia-h200-design.md` (quantize).
 *
 * The cost counts 4 bytes per code because codes are an `Int32Array` on the wire: that is what
 * the kernel must write.
 *
 * Entry points `packed` and `packed_q4` write the weight formats the quantized matvec and matmul
 * read, at a row offset of a larger destination, so a matrix whose f32 form is over one binding is
 * quantized piece by piece into one buffer (quantise-on-load: llm/weights/load.ts):
 * `packed` the q8 format ({@link quantizePacked}: the codes above, four to a word), `packed_q4` the
 * q4 group-128 format ({@link quantizePackedQ4}: ops/matvec's `quantizeQ4G128`, a scale absmax / 7
 * per 128 columns of a row, codes round(x * 7 / absmax) in [-7, 7], eight to a word). Both decide
 * codes and scales in the same exact integer arithmetic as `kernel`, so they write the bytes of
 * the converter's host quantizer on every device (on the H200, WGSL's `absmax / 127.0` differed
 * from it in the last bit for 3,114 of 65,536 rows: `harness/baselines/nvidia-h200-log/31-q4gpu-divcheck.txt`).
 * `packed_q4` gives each group of 128 columns 16 invocations (a word each, its eight columns held in
 * registers) and 16 groups a workgroup, so rows of any length and their shorter last group share
 * workgroups. Both run where a model loads, once per matrix, not in a decode loop: on the H200
 * (2026-12-02, GPU timestamps, median of 10) `packed_q4` reached 19.5% of the bandwidth roofline at
 * 8192 x 8192 and 32768 x 2048 (0.345 ms, 880 GB/s; 14.8% at 2048 x 2048), `packed` 23.7-25.2%
 * (`31-q4gpu-bench.txt`; timed before the scales were made exact, a step once per row or group).
 *
 * @module
 */

import { rowLayout } from "../../harness/grid.ts";
import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type QuantizeVariant } from "./kernels.gen.ts";
import {
  type QuantizeArgs,
  type QuantizePackedQ4Result,
  type QuantizePackedResult,
  type QuantizePackedShape,
  type QuantizeResult,
  type QuantizeShape,
  validateQuantize,
  validateQuantizePackedQ4Shape,
  validateQuantizePackedShape,
  validateQuantizeShape,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type QuantizeVariant };

/** vec4s of its row each invocation of `kernel.nvidia` holds (`SLOTS` in the WGSL). */
const SLOTS = 8;

/** Groups of 128 columns each workgroup of `packed_q4` quantizes (`GROUPS_PER_WORKGROUP` in the WGSL). */
const GROUPS_PER_WORKGROUP = 16;

/**
 * Workgroups of each variant for `rows` rows of `cols`: the portable kernel takes one row per workgroup;
 * `kernel.nvidia` spreads a row of whole vec4s over `threads` invocations by the rule the kernel
 * applies to `cols` (the least power of two that holds the row in {@link SLOTS} vec4s each, else
 * 256), so `256 / threads` rows share a workgroup, and takes a misaligned row per workgroup.
 */
function workgroupsOf(variant: string, rows: number, cols: number, maxPerDimension: number): [number, number, number] {
  if (variant === "kernel") return foldWorkgroups(rows, maxPerDimension);
  if (variant === "kernel.nvidia") {
    return cols % 4 === 0
      ? rowLayout(rows, cols, SLOTS, maxPerDimension).workgroups
      : foldWorkgroups(rows, maxPerDimension);
  }
  throw new Error(`quantize: no dispatch geometry for variant "${variant}"`);
}

/**
 * Plans `quantize` on the GPU for `x` of shape `[rows, cols]`.
 *
 * @param gpu the device
 * @param shape `rows` rows of `cols`
 * @param options kernel override
 * @returns the plan; bindings `x` (input), `codes` and `scales` (outputs)
 * @throws Error naming the argument, as {@link validateQuantizeShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { quantizePlan } from "@xpu/ops/ops/quantize";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, -0.5, 0.25, 2]));
 * const codes = gpu.alloc("i32", 4);
 * const scales = gpu.alloc("f32", 2);
 * await gpu.submit([quantizePlan(gpu, { rows: 2, cols: 2 }), [x, codes, scales]]);
 * const q = await gpu.read(codes); // [127, -63, 16, 127]
 * gpu.destroy();
 * ```
 */
export function quantizePlan(
  gpu: ResidentDevice,
  shape: QuantizeShape,
  options?: KernelOptions<QuantizeVariant>,
): KernelPlan {
  checkOptions("quantize", options);
  validateQuantizeShape(shape);
  const { rows, cols } = shape;
  const kernel = gpu.resolve(KERNELS, "kernel", options);
  return {
    op: "quantize",
    kernel,
    bindings: [
      { name: "x", dtype: "f32", length: rows * cols, role: "input" },
      { name: "codes", dtype: "i32", length: rows * cols, role: "output" },
      { name: "scales", dtype: "f32", length: rows, role: "output" },
    ],
    params: packParams(
      [{ name: "rows", type: "u32" }, { name: "cols", type: "u32" }],
      { rows, cols },
      "quantize",
    ),
    workgroups: workgroupsOf(kernel.variant, rows, cols, gpu.limits.maxComputeWorkgroupsPerDimension),
    // Read x, write a 4-byte code per element and a scale per row; per element one comparison
    // for the absmax and one multiply-divide for the code (counted as 2), one division per row.
    cost: { bytes: 8 * rows * cols + 4 * rows, flops: 3 * rows * cols + rows },
  };
}

/**
 * Quantizes each row on the GPU.
 *
 * @param gpu the device
 * @param args as {@link quantize}
 * @param options kernel override
 * @returns the codes `[rows, cols]` and the scales `[rows]`
 * @throws Error naming the argument, as {@link validateQuantize}
 *
 * @example
 * ```ts
 * import { acquireDevice, quantizeGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const { codes, scales } = await quantizeGpu(gpu, { x: new Float32Array([1, -0.5]), rows: 1, cols: 2 });
 * // codes [127, -63] (-63.5 rounds toward +Infinity), scales [1 / 127]
 * gpu.destroy();
 * ```
 */
export async function quantizeGpu(
  gpu: ResidentDevice,
  args: QuantizeArgs,
  options?: KernelOptions<QuantizeVariant>,
): Promise<QuantizeResult> {
  checkOptions("quantize", options);
  validateQuantize(args);
  const plan = quantizePlan(gpu, args, options);
  const [codes, scales] = await gpu.run(plan, [args.x]);
  return { codes: codes as Int32Array, scales: scales as Float32Array };
}

/**
 * Plans {@link quantizePacked} on the GPU (entry point `packed`): one workgroup per row, codes
 * decided exactly as `kernel` decides them, written as packed words.
 *
 * @param gpu the device
 * @param shape `rows`, `cols` and the destination's `rowOffset`
 * @param options kernel override
 * @returns the plan; bindings `x` (`[rows, cols]`), `packed` (`[rowOffset + rows, ceil(cols / 4)]`
 *   u32) and `scales` (`[rowOffset + rows]`), of which rows from `rowOffset` on are written
 * @throws Error naming the argument, as {@link validateQuantizePackedShape}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { quantizePackedPlan } from "@xpu/ops/ops/quantize";
 * const gpu = await acquireDevice();
 * // Rows 4096..8191 of a [8192, 4096] q8 matrix, from 4096 f32 rows.
 * const plan = quantizePackedPlan(gpu, { rows: 4096, cols: 4096, rowOffset: 4096 });
 * gpu.destroy();
 * ```
 */
export function quantizePackedPlan(
  gpu: ResidentDevice,
  shape: QuantizePackedShape,
  options?: KernelOptions<QuantizeVariant>,
): KernelPlan {
  checkOptions("quantize", options);
  validateQuantizePackedShape(shape);
  const { rows, cols } = shape;
  const rowOffset = shape.rowOffset ?? 0;
  const words = Math.ceil(cols / 4);
  return {
    op: "quantize",
    kernel: gpu.resolve(KERNELS, "packed", options),
    bindings: [
      { name: "x", dtype: "f32", length: rows * cols, role: "input" },
      { name: "packed", dtype: "u32", length: (rowOffset + rows) * words, role: "output" },
      { name: "scales", dtype: "f32", length: rowOffset + rows, role: "output" },
    ],
    params: packParams(
      [
        { name: "rows", type: "u32" },
        { name: "cols", type: "u32" },
        { name: "row_offset", type: "u32" },
        { name: "words", type: "u32" },
      ],
      { rows, cols, row_offset: rowOffset, words },
      "quantize",
    ),
    workgroups: foldWorkgroups(rows, gpu.limits.maxComputeWorkgroupsPerDimension),
    // Read x, write a byte per element and a scale per row; the same arithmetic as `kernel`.
    cost: { bytes: 4 * rows * cols + 4 * rows * words + 4 * rows, flops: 3 * rows * cols + rows },
  };
}

/**
 * Quantizes each row on the GPU into the q8 wire format.
 *
 * @param gpu the device
 * @param args as {@link quantizePacked}
 * @param options kernel override
 * @returns the packed codes `[rows, ceil(cols / 4)]` and the scales `[rows]`
 * @throws Error naming the argument, as {@link validateQuantize}
 *
 * @example
 * ```ts
 * import { acquireDevice, quantizePackedGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const { packed } = await quantizePackedGpu(gpu, { x: new Float32Array([1, -0.5]), rows: 1, cols: 2 });
 * // packed [0x0000c17f]: 127 and -63
 * gpu.destroy();
 * ```
 */
export async function quantizePackedGpu(
  gpu: ResidentDevice,
  args: QuantizeArgs,
  options?: KernelOptions<QuantizeVariant>,
): Promise<QuantizePackedResult> {
  checkOptions("quantize", options);
  validateQuantize(args);
  const [packed, scales] = await gpu.run(quantizePackedPlan(gpu, args, options), [args.x]);
  return { packed: packed as Uint32Array, scales: scales as Float32Array };
}

/**
 * Plans {@link quantizePackedQ4} on the GPU (entry point `packed_q4`): 16 invocations per group of
 * 128 columns, 16 groups per workgroup, codes decided exactly as `kernel` decides them.
 *
 * @param gpu the device
 * @param shape `rows`, `cols` and the destination's `rowOffset`
 * @param options kernel override
 * @returns the plan; bindings `x` (`[rows, cols]`), `packed` (`[rowOffset + rows, ceil(cols / 8)]`
 *   u32) and `scales` (`[rowOffset + rows, ceil(cols / 128)]`), of which rows from `rowOffset` on are
 *   written
 * @throws Error naming the argument, as {@link validateQuantizePackedQ4Shape}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { quantizePackedQ4Plan } from "@xpu/ops/ops/quantize";
 * const gpu = await acquireDevice();
 * // Rows 4096..8191 of a [8192, 4096] q4g128 matrix, from 4096 f32 rows.
 * const plan = quantizePackedQ4Plan(gpu, { rows: 4096, cols: 4096, rowOffset: 4096 });
 * gpu.destroy();
 * ```
 */
export function quantizePackedQ4Plan(
  gpu: ResidentDevice,
  shape: QuantizePackedShape,
  options?: KernelOptions<QuantizeVariant>,
): KernelPlan {
  checkOptions("quantize", options);
  validateQuantizePackedQ4Shape(shape);
  const { rows, cols } = shape;
  const rowOffset = shape.rowOffset ?? 0;
  const words = Math.ceil(cols / 8);
  const groups = Math.ceil(cols / 128);
  return {
    op: "quantize",
    kernel: gpu.resolve(KERNELS, "packed_q4", options),
    bindings: [
      { name: "x", dtype: "f32", length: rows * cols, role: "input" },
      { name: "packed", dtype: "u32", length: (rowOffset + rows) * words, role: "output" },
      { name: "scales", dtype: "f32", length: (rowOffset + rows) * groups, role: "output" },
    ],
    params: packParams(
      [
        { name: "rows", type: "u32" },
        { name: "cols", type: "u32" },
        { name: "row_offset", type: "u32" },
        { name: "words", type: "u32" },
        { name: "groups", type: "u32" },
      ],
      { rows, cols, row_offset: rowOffset, words, groups },
      "quantize",
    ),
    workgroups: foldWorkgroups(
      Math.ceil((rows * groups) / GROUPS_PER_WORKGROUP),
      gpu.limits.maxComputeWorkgroupsPerDimension,
    ),
    // Read x, write half a byte per element and a scale per group; per element one comparison for
    // the absmax and one multiply-divide for the code (counted as 2), one division per group.
    cost: {
      bytes: 4 * rows * cols + 4 * rows * words + 4 * rows * groups,
      flops: 3 * rows * cols + rows * groups,
    },
  };
}

/**
 * Quantizes each row on the GPU into the q4 group-128 wire format.
 *
 * @param gpu the device
 * @param args as {@link quantizePackedQ4}
 * @param options kernel override
 * @returns the packed codes `[rows, ceil(cols / 8)]` and the scales `[rows, ceil(cols / 128)]`
 * @throws Error naming the argument, as {@link validateQuantize}
 *
 * @example
 * ```ts
 * import { acquireDevice, quantizePackedQ4Gpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const { packed } = await quantizePackedQ4Gpu(gpu, { x: new Float32Array([7, -3.5]), rows: 1, cols: 2 });
 * // packed [0x000000d7]: 7 and -3 (-3.5 rounds toward +Infinity), scales [1]
 * gpu.destroy();
 * ```
 */
export async function quantizePackedQ4Gpu(
  gpu: ResidentDevice,
  args: QuantizeArgs,
  options?: KernelOptions<QuantizeVariant>,
): Promise<QuantizePackedQ4Result> {
  checkOptions("quantize", options);
  validateQuantize(args);
  const [packed, scales] = await gpu.run(quantizePackedQ4Plan(gpu, args, options), [args.x]);
  return { packed: packed as Uint32Array, scales: scales as Float32Array };
}
