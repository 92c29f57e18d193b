/**
 * softmax: along the last axis of `x` `[rows, cols]`, as `torch.softmax(x, -1)` (entry point
 * `kernel`).
 *
 * Conventions, each pinned by a test that the alternative fails:
 * - Each row is shifted by its own maximum, so logits of ±1000 (or a mix) do not overflow and give
 *   what logits near zero give.
 * - A `-Infinity` entry gives exactly 0 and leaves the rest of its row alone (a causal or padding
 *   mask). A row of nothing but `-Infinity` gives NaN in every element, as torch.softmax does;
 *   returning zeros for it (the "safe" softmax some attention kernels use) would hide a mask that
 *   removed every key, so it is not done here. On the GPU both results rest on IEEE arithmetic
 *   (exp(-inf) = 0, 0 / 0 = NaN), which WGSL does not promise; the test suite checks them on
 *   whatever adapter it runs on (llvmpipe so far).
 *
 * Refused, with an error naming the argument: `rows` or `cols` that is not an integer >= 1, and `x`
 * that is not a Float32Array of length rows * cols.
 *
 * The kernel runs one workgroup of 256 per row and loops over the row, so rows of any length work;
 * it reads the row twice (a running max and sum per invocation, then the output), and reduces the
 * maxima and the sums in workgroup memory. More than 65,535 rows fold into a second grid dimension.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import { type SoftmaxArgs, validateSoftmax } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

/**
 * Plans `softmax` on the GPU for `x` of shape `[rows, cols]`.
 *
 * @param gpu the device
 * @param shape `rows` and `cols`
 * @param options kernel override
 * @returns the plan; bindings `x` (input) and `out` (output), one workgroup per row
 */
export function softmaxPlan(
  gpu: ResidentDevice,
  shape: { rows: number; cols: number },
  options: KernelOptions = {},
): KernelPlan {
  const { rows, cols } = shape;
  const n = rows * cols;
  return {
    op: "softmax",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams([{ name: "rows", type: "u32" }, { name: "cols", type: "u32" }], { rows, cols }, "softmax"),
    workgroups: foldWorkgroups(rows, gpu.limits.maxComputeWorkgroupsPerDimension),
    // Read x once, write out once; per element a max, a subtract, an exp, an add and a divide.
    cost: { bytes: 8 * n, flops: 5 * n },
  };
}

/**
 * Softmax of each row of `x` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link softmax}
 * @param options kernel override
 * @returns the result, length rows * cols
 */
export async function softmaxGpu(
  gpu: ResidentDevice,
  args: SoftmaxArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateSoftmax(args);
  const plan = softmaxPlan(gpu, args, options);
  const [out] = await gpu.run(plan, [args.x]);
  return out as Float32Array;
}
