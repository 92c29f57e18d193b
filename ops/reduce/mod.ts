/**
 * reduce: sum, max, min or mean along one axis (`reduce`, entry point `kernel`). Matches
 * `torch.sum` / `torch.amax` / `torch.amin` / `torch.mean` along `dim`, keepdim False.
 *
 * Conventions, each pinned by a test that its alternative fails:
 * - a negative `dim` counts from the end, as torch's; `[-rank, rank)` is enforced;
 * - the reduced axis is removed from the output shape (keepdim False, torch's default);
 * - max and min propagate NaN (torch.amax / amin), rather than skipping it as WGSL's `max()` does;
 * - an empty reduced axis gives 0 for sum and NaN for mean, torch's answers, and throws for max
 *   and min, as torch does: an empty row has no extreme element to return.
 *
 * The kernel views `x` as `[outer, length, inner]` and reads it as vec4s, each invocation issuing
 * 8 independent loads per step before using any. Reducing the last axis, `lanes` invocations (the
 * fewest, a power of two up to 256, that cover the row in 4 steps of 8 vec4s each) share a row and
 * read it consecutively, and short rows share a workgroup. When every row starts on a vec4 boundary
 * (length % 4 == 0) the loads are issued unconditionally (the index clamped to the row's last vec4;
 * the duplicate is harmless to max and min and dropped from a sum by one compare per vec4), each
 * operation has its own loop of one add, max or min per element, and max and min detect NaN once
 * per row from the largest magnitude bits instead of per element; otherwise the components outside
 * a row are masked and every element goes through the NaN-propagating combine. The lanes of a row
 * combine through workgroup memory in two steps written out in full (16 partials, then the row's
 * groups; two barriers). Reducing an earlier axis, each invocation owns a vec4 of 4 neighbouring
 * outputs, at least 8 such vec4s (128 bytes of a row of x) lie side by side in a workgroup, and the
 * rest of its 256 invocations become lanes striding along the axis (a short axis leaves room for
 * more outputs instead); when inner % 4 != 0 those vec4s are read per component, and a small
 * reduction takes 4 vec4s side by side instead of 8 to have more workgroups. Either way x is read
 * exactly once.
 *
 * The aligned path and the fewer lanes were each measured to pay (2.05-3.58x over the kernel this
 * replaced, reducing the last axis; an earlier axis unchanged):
 * `harness/baselines/nvidia-h200-design.md` (reduce).
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

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type ReduceVariant } from "./kernels.gen.ts";
import { type ReduceArgs, type ReduceOp, type ReduceShape, validateReduce, validateReduceShape } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type ReduceVariant };

const WORKGROUP_SIZE = 256;
/** vec4s each invocation loads per step (`PER` in the WGSL). */
const PER = 8;
/**
 * Reducing the last axis, steps of {@link PER} vec4s each lane takes along its row: the fewest
 * lanes (a power of two) that cover the row in this many steps, so the reduction across lanes is
 * paid once per 4 * 8 vec4s of x (a row of 1,024 f32 takes 8 lanes, 32 rows per workgroup).
 */
const ROW_STEPS = 4;
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
    const lanes = Math.min(WORKGROUP_SIZE, nextPowerOfTwo(Math.ceil(quads / (ROW_STEPS * PER))));
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
 * @param reduction the operation, the shape of `x` and the dim
 * @param options kernel override
 * @returns the plan; bindings `x` (input) and `out` (output)
 * @throws Error naming the argument, as {@link validateReduceShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { reducePlan } from "@xpu/ops/ops/reduce";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 2, 3, 4, 5, 6])); // [[1, 2, 3], [4, 5, 6]]
 * const out = gpu.alloc("f32", 3);
 * await gpu.submit([reducePlan(gpu, { op: "sum", shape: [2, 3], dim: 0 }), [x, out]]);
 * const sums = await gpu.read(out); // [5, 7, 9]
 * gpu.destroy();
 * ```
 */
export function reducePlan(
  gpu: ResidentDevice,
  reduction: ReduceShape,
  options?: KernelOptions<ReduceVariant>,
): KernelPlan {
  checkOptions("reduce", options);
  const { outer, length, inner } = validateReduceShape(reduction);
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
 * Reduces `x` along `dim` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link reduce}
 * @param options kernel override
 * @returns the result, shaped as `validateReduceShape(args).outShape`
 * @throws Error naming the argument, as {@link validateReduce}
 *
 * @example
 * ```ts
 * import { acquireDevice, reduceGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([1, 2, 3, 4, 5, 6]);
 * const rowMax = await reduceGpu(gpu, { op: "max", x, shape: [2, 3], dim: -1 }); // [3, 6]
 * gpu.destroy();
 * ```
 */
export async function reduceGpu(
  gpu: ResidentDevice,
  args: ReduceArgs,
  options?: KernelOptions<ReduceVariant>,
): Promise<Float32Array> {
  checkOptions("reduce", options);
  validateReduce(args);
  const plan = reducePlan(gpu, args, options);
  const [out] = await gpu.run(plan, [args.x]);
  return out as Float32Array;
}
