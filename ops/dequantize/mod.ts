/**
 * dequantize: int32 accumulators of an int8 GEMM back to f32, applying both the activation scale
 * (per row) and the weight scale (per output channel) — `dequantize`, entry point `kernel`.
 * Matches `acc.float() * a_scales[:, None] * w_scales[None, :]` in torch on float32, bit for bit.
 *
 * Conventions, and why:
 * - Both scales are applied. A GEMM of quantize's codes carries the activation row's scale and
 *   the weight row's scale; dropping either gives a result off by a whole scale factor, and a test
 *   shows each single-scale result differs.
 * - Left to right, each product rounded to f32: `(acc * aScales[m]) * wScales[n]`, the order the
 *   torch expression above evaluates in. Multiplying the scales first rounds differently (an
 *   example is pinned in the tests), and rounding once from the exact product would need more
 *   than f32 on the GPU; against the exact product this is within three f32 roundings (2^-22
 *   relative).
 * - `acc` is converted to the nearest f32, ties to even, as torch's conversion does. WGSL leaves
 *   the direction of that rounding unspecified above 2^24, so the kernel converts two exact halves
 *   and lets one correctly rounded addition round.
 * - NaN and ±Infinity in the scales propagate, as in that torch expression (0 * Infinity is NaN);
 *   they are plain IEEE products here, checked on the adapter the tests run on.
 *
 * Refused, with an error naming the argument: M or N that is not an integer >= 1, and arrays of
 * the wrong type or length.
 *
 * The portable kernel takes one element per invocation, its grid folded past 65,535 workgroups. On
 * NVIDIA, `kernel.nvidia` is resolved instead, tuned for bandwidth: `acc` and the output stream as
 * vec4s, four per invocation with every load issued before the first store, blocks dealt to at
 * most 65,535 workgroups in a grid-stride loop; the arithmetic, and so every bit of the result, is
 * the same. One element per invocation keeps too few bytes in flight to stream at the H200's
 * bandwidth.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { type DequantizeVariant, KERNELS } from "./kernels.gen.ts";
import { type DequantizeArgs, type DequantizeShape, validateDequantize, validateDequantizeShape } from "./reference.ts";

export * from "./reference.ts";
export { type DequantizeVariant, KERNELS };

/** Elements one workgroup of `kernel.nvidia` moves per block: 256 invocations x 4 vec4s. */
const BLOCK = 256 * 4 * 4;

/**
 * Workgroups of each variant: the portable kernel takes one element per invocation, the grid
 * folded past the per-dimension limit; `kernel.nvidia` strides over blocks of {@link BLOCK}.
 */
function workgroupsOf(variant: string, total: number, maxPerDimension: number): [number, number, number] {
  if (variant === "kernel") return foldWorkgroups(Math.ceil(total / 256), maxPerDimension);
  if (variant === "kernel.nvidia") return [Math.min(Math.ceil(total / BLOCK), maxPerDimension), 1, 1];
  throw new Error(`dequantize: no dispatch geometry for variant "${variant}"`);
}

/**
 * Plans `dequantize` on the GPU for `acc` of shape `[M, N]`.
 *
 * @param gpu the device
 * @param shape `M` rows of `N`
 * @param options kernel override
 * @returns the plan; bindings `acc`, `aScales`, `wScales` (inputs) and `out` (output)
 * @throws Error naming the argument, as {@link validateDequantizeShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { dequantizePlan } from "@xpu/ops/ops/dequantize";
 * const gpu = await acquireDevice();
 * const acc = gpu.upload(new Int32Array([10, -4]));
 * const aScales = gpu.upload(new Float32Array([0.5]));
 * const wScales = gpu.upload(new Float32Array([0.25, 2]));
 * const out = gpu.alloc("f32", 2);
 * await gpu.submit([dequantizePlan(gpu, { M: 1, N: 2 }), [acc, aScales, wScales, out]]);
 * const y = await gpu.read(out); // [1.25, -4]
 * gpu.destroy();
 * ```
 */
export function dequantizePlan(
  gpu: ResidentDevice,
  shape: DequantizeShape,
  options?: KernelOptions<DequantizeVariant>,
): KernelPlan {
  checkOptions("dequantize", options);
  validateDequantizeShape(shape);
  const { M, N } = shape;
  const total = M * N;
  const kernel = gpu.resolve(KERNELS, "kernel", options);
  return {
    op: "dequantize",
    kernel,
    bindings: [
      { name: "acc", dtype: "i32", length: total, role: "input" },
      { name: "aScales", dtype: "f32", length: M, role: "input" },
      { name: "wScales", dtype: "f32", length: N, role: "input" },
      { name: "out", dtype: "f32", length: total, role: "output" },
    ],
    params: packParams(
      [{ name: "n_total", type: "u32" }, { name: "cols", type: "u32" }],
      { n_total: total, cols: N },
      "dequantize",
    ),
    workgroups: workgroupsOf(kernel.variant, total, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 8 * total + 4 * (M + N), flops: 2 * total },
  };
}

/**
 * Dequantizes GEMM accumulators on the GPU.
 *
 * @param gpu the device
 * @param args as {@link dequantize}
 * @param options kernel override
 * @returns the result `[M, N]`
 * @throws Error naming the argument, as {@link validateDequantize}
 *
 * @example
 * ```ts
 * import { acquireDevice, dequantizeGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const acc = new Int32Array([3, 0]);
 * const y = await dequantizeGpu(gpu, { acc, aScales: new Float32Array([2]), wScales: new Float32Array([1, Infinity]), M: 1, N: 2 });
 * // [6, NaN]: 0 * Infinity, as torch
 * gpu.destroy();
 * ```
 */
export async function dequantizeGpu(
  gpu: ResidentDevice,
  args: DequantizeArgs,
  options?: KernelOptions<DequantizeVariant>,
): Promise<Float32Array> {
  checkOptions("dequantize", options);
  validateDequantize(args);
  const plan = dequantizePlan(gpu, args, options);
  const [out] = await gpu.run(plan, [args.acc, args.aScales, args.wScales]);
  return out as Float32Array;
}
