/**
 * reduce: sum, max, min or mean along one axis (`reduce`, entry point `kernel`). Matches
 * `torch.sum` / `torch.amax` / `torch.amin` / `torch.mean` with `dim = axis` and keepdim False.
 *
 * Conventions, each pinned by a test that its alternative fails:
 * - a negative axis counts from the end, as torch's `dim`; `[-rank, rank)` is enforced;
 * - the reduced axis is removed from the output shape (keepdim False, torch's default);
 * - max and min propagate NaN (torch.amax / amin), rather than skipping it as WGSL's `max()` does;
 * - an empty reduced axis gives 0 for sum and NaN for mean, torch's answers, and throws for max
 *   and min, as torch does: an empty row has no extreme element to return.
 *
 * The kernel views `x` as `[outer, length, inner]` and gives each output a power-of-two number of
 * lanes (up to a whole workgroup of 256 for a long axis) that stride along the axis and combine in
 * workgroup memory. Reducing the last axis, an output's lanes are adjacent and read its row
 * consecutively; reducing an earlier axis, neighbouring outputs are adjacent instead, so
 * neighbouring invocations read neighbouring addresses rather than addresses `inner` apart.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import { type ReduceArgs, type ReduceOp, type ReduceShape, reduceView, validateReduce } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

const WORKGROUP_SIZE = 256;
/**
 * Reducing an earlier axis, a workgroup takes at least this many neighbouring outputs (fewer only
 * when `inner` is smaller), so that each step along the axis reads a run of 128 bytes; the rest of
 * its 256 invocations become lanes along the axis, and a short axis leaves room for more outputs.
 */
const ADJACENT_OUTPUTS = 32;
const OP_CODES: Record<ReduceOp, number> = { sum: 0, max: 1, min: 2, mean: 3 };
const PARAMS = [
  { name: "outputs", type: "u32" },
  { name: "length", type: "u32" },
  { name: "inner", type: "u32" },
  { name: "lanes", type: "u32" },
  { name: "lane_stride", type: "u32" },
  { name: "op", type: "u32" },
] as const;

function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * Plans `reduce` on the GPU.
 *
 * @param gpu the device
 * @param reduction the operation, the shape of `x` and the axis (validated here)
 * @param options kernel override
 * @returns the plan; bindings `x` (input) and `out` (output)
 * @throws Error naming a bad operation, shape or axis
 */
export function reducePlan(gpu: ResidentDevice, reduction: ReduceShape, options: KernelOptions = {}): KernelPlan {
  const { outer, length, inner } = reduceView(reduction);
  const outputs = outer * inner;
  const widest = inner === 1 ? WORKGROUP_SIZE : WORKGROUP_SIZE / Math.min(ADJACENT_OUTPUTS, nextPowerOfTwo(inner));
  const lanes = Math.min(widest, nextPowerOfTwo(length));
  const slots = WORKGROUP_SIZE / lanes;
  return {
    op: "reduce",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: outer * length * inner, role: "input" },
      { name: "out", dtype: "f32", length: outputs, role: "output" },
    ],
    params: packParams(PARAMS, {
      outputs,
      length,
      inner,
      lanes,
      lane_stride: inner === 1 ? 1 : slots,
      op: OP_CODES[reduction.op],
    }, "reduce"),
    workgroups: foldWorkgroups(Math.ceil(outputs / slots), gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: {
      bytes: 4 * (outer * length * inner + outputs),
      flops: outputs * Math.max(0, length - 1) + (reduction.op === "mean" ? outputs : 0),
    },
  };
}

/**
 * Reduces `x` along `axis` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link reduce}
 * @param options kernel override
 * @returns the result, shaped as `reduceView(args).outShape`
 */
export async function reduceGpu(
  gpu: ResidentDevice,
  args: ReduceArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateReduce(args);
  const plan = reducePlan(gpu, args, options);
  const [out] = await gpu.run(plan, [args.x]);
  return out as Float32Array;
}
