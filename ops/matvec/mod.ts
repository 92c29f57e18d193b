/**
 * matvec: GEMV, one vector against a matrix, in f32 (`matvec`, entry point `kernel`), with an int8
 * weight (`matvecQ8`, entry point `q8row`) and with a 4-bit group-128 weight (`matvecQ4G128`, entry
 * point `q4g128`). The entry points are not called `q8` and `q4` because those are dtype suffixes in
 * the variant grammar. `matvec` matches `torch.mv(W, x)`; the quantized two match `torch.mv` on the
 * weight dequantized in f64. The wire formats, `packQ8`, `packQ4`, `quantizeQ4G128` and the
 * conventions each one pins are described in `reference.ts`. NaN and ±Infinity give torch's results
 * (nonfinite.test.ts): a quantized row whose scaled sum comes out ±inf is summed again term by term
 * after the reduction (`wgsl/include/q_term_sums.wgsl`: a bit test per row at the store), since
 * torch's sum is NaN there when a zero code meets an infinite scale or infinite terms differ in sign.
 *
 * GEMV reads every weight exactly once and reuses nothing but `x`, so it is bound by how fast the
 * weight streams through memory; it is a separate op from GEMM, whose speed comes from tiling for
 * reuse that GEMV does not have. What keeps a GEMV at the bandwidth roofline is bytes in flight: each
 * invocation has several independent 16-byte loads of the weight outstanding at once (written out,
 * since WGSL loops compile to bounded `loop`s that a driver may not unroll), many invocations share
 * a row (split-K, neighbouring invocations reading neighbouring vec4s), and a row's partial sums are
 * reduced in workgroup memory (in two rounds, or by a tree in the NVIDIA quantized kernels). Rows
 * whose start is 16-byte aligned (K a multiple of 4 in f32, of 16 in q8, of 32 in q4) are read a
 * vec4 at a time.
 * - f32 (`kernel`): 64 invocations per row, four rows per workgroup, four vec4 loads in flight per
 *   invocation; `kernel.nvidia` is 32 per row, eight rows, eight loads.
 * - q8 and q4 (`q8row`, `q4g128`): a code is 1 byte or half a byte, its activation 4, so unless an
 *   activation loaded once serves several rows, reading `x` costs more than reading the weight.
 *   Each invocation therefore sums four rows over the same columns; 64 invocations across K and
 *   four such groups make 16 rows per workgroup, each invocation with one vec4 of codes of each of
 *   its four rows in flight. Codes are decoded without an integer-to-float conversion, an
 *   instruction NVIDIA runs at a fraction of the FMA rate and the likely limit of a plain decode (one
 *   per code): the code's bits are masked into the mantissa of a float whose exponent makes the
 *   mantissa's unit 1, with the sign bit flipped (two's complement to offset binary), and the bias
 *   subtracted; exact, and one logic operation and one add per code.
 * - `q8row.nvidia`: the same loads at 128 invocations across K and two row groups (8 rows per
 *   workgroup), with the accumulators local to the entry point, every decode and FMA written out in
 *   it (no helper functions, no module-scope variables) and the partial sums reduced by a tree.
 * - `q4g128.nvidia`: 64 invocations across K and four row groups (16 rows), two vec4s of codes of
 *   each row in flight per invocation, and `x` staged through workgroup memory in tiles of 4096
 *   columns that the four row groups share: read from global memory, an invocation's 32 codes need 8
 *   vec4s of `x`, 128 bytes from its neighbour's. The tile is swizzled against bank conflicts, and
 *   the partial sums, reduced by a tree, reuse its 16 KiB. Accumulators local to the entry point;
 *   each vec4 of codes decoded and summed by one function, `chunk_dot`.
 * - `q8row_rows64` and `q4g128_rows64` (entry points of their own, for weights of many rows such as
 *   an output head): the same decode with only 16 (q8) or 8 (q4) invocations across K, 64 rows per
 *   workgroup, and a short reduction. Where N is large the default layouts run thousands of
 *   workgroups whose loop is a single step, and their fixed cost sets the pace; these run longer
 *   loops in a sixteenth of the workgroups (102400 x 1792 on the H200: q8 77.7 -> 58.7 us, q4
 *   69.4 -> 55.8 us) but lose where N is small (8192 x 8192: q8 50.7% -> 41.0%, q4 27.7% -> 24.1%;
 *   14336 x 4096, 224 workgroups: level for q8, q4 29.5% -> 27.6%). The plans take them when N is
 *   at least {@link QUANTIZED_TALL_MIN_ROWS} (512 workgroups), between the two measured shapes; an
 *   override may name a variant of either entry point.
 * Each plan reads its workgroup's row count from the resolved kernel's `ROWS` constant. More than
 * 65,535 workgroups fold into a second grid dimension. Every kernel stays within WebGPU's default
 * 16 KiB of workgroup memory (a test holds them to it), so no plan checks the device's
 * maxComputeWorkgroupStorageSize.
 *
 * The quantized kernels are far from the roofline: against a target of 75%, `q8row.nvidia` reaches
 * 30-53% and `q4g128.nvidia` 9-28% at the bench shapes on the H200. Where the time goes (a short
 * pass's launch and drain, and loads and decode that do not overlap), the designs they replaced and
 * eight others measured with them are in `harness/baselines/nvidia-h200-design.md` (matvec).
 *
 * Non-obvious choices:
 * - q8's scale multiplies the finished dot product, once per row, not each term. The alternative
 *   rounds every scaled term: at scale s = f32(1/3), codes [127, -126] against x = [1, 1] give
 *   exactly s here, and 0.33333588 (7.6e-6 off) when each term is scaled to f32 first. q4's scales
 *   multiply the partial dot product of each word (or vec4 of words) of a group, which is still
 *   never a single term: the same codes at q4's [7, -6] give exactly s too.
 * - Codes are decoded with bit operations and an exact float subtraction (above), which every WGSL
 *   implementation has; activations are f32, so an integer dot-product instruction would not apply.
 *   In the portable kernels the decoded values of bytes 1 and 3 (nibbles 1-3 and 5-7) carry a
 *   power-of-two factor that each word's or vec4's sum divides out exactly; the NVIDIA ones give
 *   each byte or nibble position a float exponent of its own, so that the decoded value is the code
 *   itself. Either way every product is the code times the activation.
 * - Before anything is uploaded, each plan checks every binding against maxStorageBufferBindingSize
 *   and maxBufferSize and throws a LimitError naming the argument (`weight`, usually) and its size
 *   in bytes. Past that limit WebGPU reads back zeros rather than failing, so a weight too large for
 *   one binding is refused rather than split: splitting it is the caller's decision.
 *
 * Refused, with an error naming the argument: N or K not an integer >= 1, and arrays of the wrong
 * type or length for the shape.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import { type BindingSpec, type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import type { Resolution } from "../../harness/resolve.ts";
import { KERNELS, type MatvecVariant } from "./kernels.gen.ts";
import {
  type MatvecArgs,
  type MatvecQ4G128Args,
  type MatvecQ8Args,
  type MatvecShape,
  Q4_GROUP,
  validateMatvec,
  validateMatvecQ4G128,
  validateMatvecQ4G128Shape,
  validateMatvecQ8,
  validateMatvecQ8Shape,
  validateMatvecShape,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type MatvecVariant };

/** Rows a kernel's workgroup computes: its WGSL's `ROWS` constant (the source is the one truth). */
function rowsPerWorkgroup(variant: string, source: string): number {
  const m = /\bconst ROWS = (\d+)u;/.exec(source);
  if (!m) throw new Error(`matvec/${variant}: the kernel must declare const ROWS = <rows per workgroup>u`);
  return Number(m[1]);
}
const PARAMS = [{ name: "n", type: "u32" }, { name: "k", type: "u32" }] as const;

/** The least number of weight rows for which the quantized plans take their `_rows64` entry points. */
export const QUANTIZED_TALL_MIN_ROWS = 32768;

/** Each quantized GEMV's entry points: the default one and the one for weights of many rows. */
const QUANTIZED_ENTRIES: Readonly<Record<"matvecQ8" | "matvecQ4G128", readonly [string, string]>> = {
  matvecQ8: ["q8row", "q8row_rows64"],
  matvecQ4G128: ["q4g128", "q4g128_rows64"],
};

/**
 * The kernel of a quantized plan: the variant an override names (of either entry point), or the
 * entry point the number of rows calls for, resolved for the device's target.
 */
function quantizedKernel(
  gpu: ResidentDevice,
  fn: "matvecQ8" | "matvecQ4G128",
  shape: MatvecShape,
  options: KernelOptions<MatvecVariant> | undefined,
): Resolution {
  const [base, tall] = QUANTIZED_ENTRIES[fn];
  return gpu.resolveAmong(KERNELS, fn, [base, tall], shape.N >= QUANTIZED_TALL_MIN_ROWS ? tall : base, options);
}

function plan(
  gpu: ResidentDevice,
  fn: string,
  kernel: Resolution,
  shape: MatvecShape,
  weights: readonly BindingSpec[],
): KernelPlan {
  const { N, K } = shape;
  const bindings: BindingSpec[] = [
    ...weights,
    { name: "x", dtype: "f32", length: K, role: "input" },
    { name: "y", dtype: "f32", length: N, role: "output" },
  ];
  const workgroups = foldWorkgroups(
    Math.ceil(N / rowsPerWorkgroup(kernel.variant, kernel.source)),
    gpu.limits.maxComputeWorkgroupsPerDimension,
  );
  const bytes = 4 * bindings.reduce((sum, b) => sum + b.length, 0);
  return {
    op: "matvec",
    kernel,
    bindings,
    params: packParams(PARAMS, { n: N, k: K }, fn),
    workgroups,
    // Every weight word, scale and x element read once, y written once; a multiply and an add per weight.
    cost: { bytes, flops: 2 * N * K },
  };
}

/**
 * Plans `matvec` on the GPU.
 *
 * @param gpu the device
 * @param shape `N` and `K`
 * @param options kernel override
 * @returns the plan; bindings `weight` `[N, K]`, `x` `[K]` (inputs) and `y` `[N]` (output)
 * @throws Error naming N or K when not an integer >= 1
 * @throws LimitError naming the binding that exceeds maxStorageBufferBindingSize or maxBufferSize
 * @example Resident tensors: the weight uploaded once, one plan submitted per step
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { matvecPlan } from "@xpu/ops/ops/matvec";
 * const gpu = await acquireDevice();
 * const weight = gpu.upload(new Float32Array([1, 2, 3, 4, 5, 6])); // [N = 2, K = 3]
 * const x = gpu.upload(new Float32Array([1, 0, -1]));
 * const y = gpu.alloc("f32", 2);
 * await gpu.submit([matvecPlan(gpu, { N: 2, K: 3 }), [weight, x, y]]);
 * const out = await gpu.read(y); // [-2, -2]
 * gpu.destroy();
 * ```
 */
export function matvecPlan(
  gpu: ResidentDevice,
  shape: MatvecShape,
  options?: KernelOptions<MatvecVariant>,
): KernelPlan {
  requireDevice("matvec", gpu);
  checkOptions("matvec", options);
  validateMatvecShape(shape);
  const weight: BindingSpec = { name: "weight", dtype: "f32", length: shape.N * shape.K, role: "input" };
  return plan(gpu, "matvec", gpu.resolve(KERNELS, "kernel", options), shape, [weight]);
}

/**
 * `y = W x` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link matvec}
 * @param options kernel override
 * @returns y, length N
 * @throws Error naming the argument, as {@link validateMatvec}
 *
 * @example
 * ```ts
 * import { acquireDevice, matvecGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const weight = new Float32Array([1, 2, 3, 4]); // [N = 2, K = 2]
 * const y = await matvecGpu(gpu, { weight, x: new Float32Array([1, 1]), N: 2, K: 2 }); // [3, 7]
 * gpu.destroy();
 * ```
 */
export async function matvecGpu(
  gpu: ResidentDevice,
  args: MatvecArgs,
  options?: KernelOptions<MatvecVariant>,
): Promise<Float32Array> {
  requireDevice("matvec", gpu);
  checkOptions("matvec", options);
  validateMatvec(args);
  const [y] = await gpu.run(matvecPlan(gpu, args, options), [args.weight, args.x]);
  return y as Float32Array;
}

/**
 * Plans `matvecQ8` on the GPU.
 *
 * @param gpu the device
 * @param shape `N` and `K`
 * @param options kernel override
 * @returns the plan; bindings `weight` `[N, ceil(K/4)]` u32, `scales` `[N]`, `x` `[K]` (inputs) and
 *   `y` `[N]` (output)
 * @throws Error naming N or K when not an integer >= 1
 * @throws LimitError naming the binding that exceeds maxStorageBufferBindingSize or maxBufferSize
 * @example Resident tensors: a quantized weight uploaded once
 * ```ts
 * import { acquireDevice, packQ8, quantize } from "@xpu/ops";
 * import { matvecQ8Plan } from "@xpu/ops/ops/matvec";
 * const gpu = await acquireDevice();
 * const { codes, scales } = quantize({ x: new Float32Array([1, -1, 2, 4]), rows: 2, cols: 2 });
 * const weight = gpu.upload(packQ8(codes, 2, 2));
 * const rowScales = gpu.upload(scales);
 * const x = gpu.upload(new Float32Array([1, 1]));
 * const y = gpu.alloc("f32", 2);
 * await gpu.submit([matvecQ8Plan(gpu, { N: 2, K: 2 }), [weight, rowScales, x, y]]);
 * const out = await gpu.read(y); // ~[0, 6.016]: the codes times their row scale
 * gpu.destroy();
 * ```
 */
export function matvecQ8Plan(
  gpu: ResidentDevice,
  shape: MatvecShape,
  options?: KernelOptions<MatvecVariant>,
): KernelPlan {
  requireDevice("matvecQ8", gpu);
  checkOptions("matvecQ8", options);
  validateMatvecQ8Shape(shape);
  const { N, K } = shape;
  return plan(gpu, "matvecQ8", quantizedKernel(gpu, "matvecQ8", shape, options), shape, [
    { name: "weight", dtype: "u32", length: N * Math.ceil(K / 4), role: "input" },
    { name: "scales", dtype: "f32", length: N, role: "input" },
  ]);
}

/**
 * `y[n] = scales[n] * sum_k code[n, k] * x[k]` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link matvecQ8}
 * @param options kernel override
 * @returns y, length N
 * @throws Error naming the argument, as {@link validateMatvecQ8}
 *
 * @example
 * ```ts
 * import { acquireDevice, matvecQ8Gpu, packQ8 } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const weight = packQ8(new Int32Array([1, 2, -3, 4]), 2, 2);
 * const y = await matvecQ8Gpu(gpu, { weight, scales: new Float32Array([0.5, 2]), x: new Float32Array([1, 1]), N: 2, K: 2 });
 * // [1.5, 2]
 * gpu.destroy();
 * ```
 */
export async function matvecQ8Gpu(
  gpu: ResidentDevice,
  args: MatvecQ8Args,
  options?: KernelOptions<MatvecVariant>,
): Promise<Float32Array> {
  requireDevice("matvecQ8", gpu);
  checkOptions("matvecQ8", options);
  validateMatvecQ8(args);
  const [y] = await gpu.run(matvecQ8Plan(gpu, args, options), [args.weight, args.scales, args.x]);
  return y as Float32Array;
}

/**
 * Plans `matvecQ4G128` on the GPU.
 *
 * @param gpu the device
 * @param shape `N` and `K`
 * @param options kernel override
 * @returns the plan; bindings `weight` `[N, ceil(K/8)]` u32, `scales` `[N, ceil(K/128)]`, `x` `[K]`
 *   (inputs) and `y` `[N]` (output)
 * @throws Error naming N or K when not an integer >= 1
 * @throws LimitError naming the binding that exceeds maxStorageBufferBindingSize or maxBufferSize
 * @example Resident tensors: a q4 weight uploaded once
 * ```ts
 * import { acquireDevice, packQ4, quantizeQ4G128 } from "@xpu/ops";
 * import { matvecQ4G128Plan } from "@xpu/ops/ops/matvec";
 * const gpu = await acquireDevice();
 * const { codes, scales } = quantizeQ4G128({ x: new Float32Array([7, -7, 1, 1]), rows: 2, cols: 2 });
 * const weight = gpu.upload(packQ4(codes, 2, 2));
 * const groupScales = gpu.upload(scales);
 * const x = gpu.upload(new Float32Array([1, 2]));
 * const y = gpu.alloc("f32", 2);
 * await gpu.submit([matvecQ4G128Plan(gpu, { N: 2, K: 2 }), [weight, groupScales, x, y]]);
 * const out = await gpu.read(y); // [-7, 3]
 * gpu.destroy();
 * ```
 */
export function matvecQ4G128Plan(
  gpu: ResidentDevice,
  shape: MatvecShape,
  options?: KernelOptions<MatvecVariant>,
): KernelPlan {
  requireDevice("matvecQ4G128", gpu);
  checkOptions("matvecQ4G128", options);
  validateMatvecQ4G128Shape(shape);
  const { N, K } = shape;
  return plan(gpu, "matvecQ4G128", quantizedKernel(gpu, "matvecQ4G128", shape, options), shape, [
    { name: "weight", dtype: "u32", length: N * Math.ceil(K / 8), role: "input" },
    { name: "scales", dtype: "f32", length: N * Math.ceil(K / Q4_GROUP), role: "input" },
  ]);
}

/**
 * `y[n] = sum_g scales[n, g] * sum_{k in group g} code[n, k] * x[k]` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link matvecQ4G128}
 * @param options kernel override
 * @returns y, length N
 * @throws Error naming the argument, as {@link validateMatvecQ4G128}
 *
 * @example
 * ```ts
 * import { acquireDevice, matvecQ4G128Gpu, packQ4 } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const weight = packQ4(new Int32Array([7, -7]), 1, 2);
 * const y = await matvecQ4G128Gpu(gpu, { weight, scales: new Float32Array([0.5]), x: new Float32Array([1, 2]), N: 1, K: 2 });
 * // [-3.5]
 * gpu.destroy();
 * ```
 */
export async function matvecQ4G128Gpu(
  gpu: ResidentDevice,
  args: MatvecQ4G128Args,
  options?: KernelOptions<MatvecVariant>,
): Promise<Float32Array> {
  requireDevice("matvecQ4G128", gpu);
  checkOptions("matvecQ4G128", options);
  validateMatvecQ4G128(args);
  const [y] = await gpu.run(matvecQ4G128Plan(gpu, args, options), [args.weight, args.scales, args.x]);
  return y as Float32Array;
}
