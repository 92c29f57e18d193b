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
 * The kernel views `x` as `[outer, length, inner]` and reads it as vec4s, each invocation issuing
 * 8 independent loads before using any. Reducing the last axis, `lanes` invocations (the fewest, a
 * power of two up to 256, that need at most 8 vec4s each per pass) share a row and read it
 * consecutively, and short rows share a workgroup; a row need not start on a vec4 boundary, the
 * components outside it are masked. Reducing an earlier axis, each invocation owns a vec4 of 4
 * neighbouring outputs, at least 8 such vec4s (128 bytes of a row of x) lie side by side in a
 * workgroup, and the rest of its 256 invocations become lanes striding along the axis (a short
 * axis leaves room for more outputs instead); when inner % 4 != 0 those vec4s are read per
 * component, and a small reduction takes 4 vec4s side by side instead of 8 to have more workgroups.
 * Either way the lanes combine in workgroup memory, and x is read exactly once.
 *
 * Why the kernel holds its 8 vec4s as eight named values written out by hand, never as a local
 * array indexed in a loop: the previous kernels of softmax, rmsnorm, layernorm and reduce, built
 * around such an array, measured 298-417 GB/s at 8192 x 8192 on an H200 (7-9% of its 4,520 GB/s
 * roofline; Deno 2.9.6 over Vulkan, GPU timestamps), while a plain vec4 elementwise kernel reached
 * 4,223 GB/s in the same session. The suspected cause: Deno's WGSL compiler (naga) bounds-checks
 * every index into a function-scope array, and the driver may then keep the array in
 * per-invocation local memory (spilled to VRAM through L1/L2). This version has not yet been
 * timed on the H200. Partial vec4s are likewise read and written through their named components
 * (.x .. .w), not a loop over a component index.
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
/** vec4s each invocation loads per pass (`PER` in the WGSL). */
const PER = 8;
/**
 * Reducing an earlier axis, a workgroup takes at least this many neighbouring vec4s of outputs
 * (fewer only when `inner` is smaller), so that each step along the axis reads a run of 128 bytes;
 * the rest of its 256 invocations become lanes along the axis, and a short axis leaves room for
 * more outputs.
 */
const ADJACENT_QUADS = 8;
/**
 * Reducing an earlier axis, fewer workgroups than this (two per SM of a 132-SM GPU, rounded) would
 * leave too few bytes in flight, so a workgroup then takes half as many neighbouring vec4s and
 * twice the lanes.
 */
const MIN_GROUPS = 256;
const OP_CODES: Record<ReduceOp, number> = { sum: 0, max: 1, min: 2, mean: 3 };
const PARAMS = [
  { name: "outer", type: "u32" },
  { name: "length", type: "u32" },
  { name: "inner", type: "u32" },
  { name: "lanes", type: "u32" },
  { name: "op", type: "u32" },
] as const;

function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * Invocations per row or per vec4 of outputs (`lanes`), and how many workgroups the reduction takes.
 */
function layout(outer: number, length: number, inner: number): { lanes: number; groups: number } {
  if (inner === 1) {
    // vec4s a row touches: length / 4 when every row starts on a vec4 boundary, else one more at most.
    const quads = length === 0 ? 0 : length % 4 === 0 ? length / 4 : Math.floor((length + 6) / 4);
    const lanes = Math.min(WORKGROUP_SIZE, nextPowerOfTwo(Math.ceil(quads / PER)));
    return { lanes, groups: Math.ceil(outer / (WORKGROUP_SIZE / lanes)) };
  }
  const quads = Math.ceil(inner / 4);
  let adjacent = Math.min(ADJACENT_QUADS, nextPowerOfTwo(quads));
  // Half as many (runs of 64 bytes) when that is what it takes to reach MIN_GROUPS workgroups.
  if (adjacent === ADJACENT_QUADS && Math.ceil((outer * quads) / adjacent) < MIN_GROUPS) adjacent /= 2;
  const lanes = Math.min(WORKGROUP_SIZE / adjacent, nextPowerOfTwo(length));
  return { lanes, groups: Math.ceil((outer * quads) / (WORKGROUP_SIZE / lanes)) };
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
  const { lanes, groups } = layout(outer, length, inner);
  return {
    op: "reduce",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: outer * length * inner, role: "input" },
      { name: "out", dtype: "f32", length: outputs, role: "output" },
    ],
    params: packParams(PARAMS, { outer, length, inner, lanes, op: OP_CODES[reduction.op] }, "reduce"),
    workgroups: foldWorkgroups(groups, gpu.limits.maxComputeWorkgroupsPerDimension),
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
