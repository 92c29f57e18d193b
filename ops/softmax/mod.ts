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
 * The kernel reads and writes vec4s and spreads a row over `threads` invocations (a power of two,
 * 256 / threads rows per workgroup), each taking up to 8 vec4s of it, so a row of up to 8,192
 * elements (8,186 when cols % 4 != 0) is read once into registers, reduced (max, then the sum of
 * exponentials) through workgroup memory, and written from there: one read and one write of each
 * element, the least the op can move. Short rows share a workgroup so that each workgroup still has
 * about 32 KiB in flight. Longer rows take a whole workgroup, keep a running (max, sum) over
 * 8,192-element chunks and read the row a second time to write it, last chunk first so that part of
 * it comes from L2 (3 of 2 ideal passes). More than 65,535 workgroups fold into a second grid
 * dimension.
 *
 * When cols % 4 == 0 every row starts on a vec4 boundary and the kernel issues its 8 loads
 * unconditionally (the index clamped to the row's last vec4, the duplicate dropped by one compare
 * per vec4), masks nothing per element and writes each vec4 with one store. Otherwise the
 * components outside a row are masked, loads past the row's end are skipped, and a partial vec4 is
 * written one component at a time. Both paths reduce through workgroup memory in two steps written
 * out in full (16 partials, then the row's groups; two barriers).
 *
 * On the H200, 8192 x 8192 runs at 84% of the read roofline; the gain of each choice above over the
 * masked kernel this replaced, and what was tried and left out (`threads` as a constant), are in
 * `harness/baselines/nvidia-h200-design.md` (softmax).
 *
 * Why the kernel holds its 8 vec4s as eight named values written out by hand, never as a local
 * array indexed in a loop: Deno's WGSL compiler (naga) bounds-checks every index into a
 * function-scope array, and the driver may then keep the array in per-invocation local memory
 * (spilled to VRAM through L1/L2); an earlier array-based version of this kernel was several times
 * slower on the H200. Partial vec4s are likewise read and written through their named components
 * (.x .. .w), not a loop over a component index.
 *
 * @module
 */

import { rowLayout } from "../../harness/grid.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type SoftmaxVariant } from "./kernels.gen.ts";
import { type SoftmaxArgs, type SoftmaxShape, validateSoftmax, validateSoftmaxShape } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type SoftmaxVariant };

/** vec4s each invocation holds of its row (`PER` in the WGSL). */
const PER = 8;

/** The kernel's uniform, in WGSL declaration order. */
const PARAMS: readonly ParamField[] = [
  { name: "rows", type: "u32" },
  { name: "cols", type: "u32" },
  { name: "threads", type: "u32" },
  { name: "resident", type: "u32" },
];

/**
 * Plans `softmax` on the GPU for `x` of shape `[rows, cols]`.
 *
 * @param gpu the device
 * @param shape `rows` and `cols`
 * @param options kernel override
 * @returns the plan; bindings `x` (input) and `out` (output), 256 / threads rows per workgroup
 * @throws Error naming the argument, as {@link validateSoftmaxShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { softmaxPlan } from "@xpu/ops/ops/softmax";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 2, 3, 4, 5, 6]));
 * const out = gpu.alloc("f32", 6);
 * await gpu.submit([softmaxPlan(gpu, { rows: 2, cols: 3 }), [x, out]]);
 * const y = await gpu.read(out); // each row sums to 1
 * gpu.destroy();
 * ```
 */
export function softmaxPlan(
  gpu: ResidentDevice,
  shape: SoftmaxShape,
  options?: KernelOptions<SoftmaxVariant>,
): KernelPlan {
  checkOptions("softmax", options);
  validateSoftmaxShape(shape);
  const { rows, cols } = shape;
  const n = rows * cols;
  const { threads, resident, workgroups } = rowLayout(rows, cols, PER, gpu.limits.maxComputeWorkgroupsPerDimension);
  return {
    op: "softmax",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams(PARAMS, { rows, cols, threads, resident: Number(resident) }, "softmax"),
    workgroups,
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
 * @throws Error naming the argument, as {@link validateSoftmax}
 *
 * @example
 * ```ts
 * import { acquireDevice, softmaxGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const y = await softmaxGpu(gpu, { x: new Float32Array([0, Math.log(3)]), rows: 1, cols: 2 }); // ~[0.25, 0.75]
 * gpu.destroy();
 * ```
 */
export async function softmaxGpu(
  gpu: ResidentDevice,
  args: SoftmaxArgs,
  options?: KernelOptions<SoftmaxVariant>,
): Promise<Float32Array> {
  checkOptions("softmax", options);
  validateSoftmax(args);
  const plan = softmaxPlan(gpu, args, options);
  const [out] = await gpu.run(plan, [args.x]);
  return out as Float32Array;
}
