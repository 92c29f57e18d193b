/**
 * group_norm: `torch.nn.functional.group_norm(x, groups, weight, bias, eps)` over `x` `[N, C, L]`
 * (L the product of the spatial dimensions), entry point `kernel`.
 *
 * Conventions, each pinned by a test against torch goldens that the alternative fails:
 * - statistics over each (sample, group) of C / groups consecutive channels together, (C / groups)
 *   x L values: not per channel (instance norm, which groups = C gives) and not over the whole
 *   sample (which groups = 1 gives);
 * - the biased variance (divided by the count, not the count less one);
 * - eps inside the square root, default 1e-5 as torch;
 * - weight and bias per channel `[C]`, not per group; each optional.
 *
 * Refused, with an error naming the argument, before any GPU work: sizes that are not integers
 * >= 1, C not divisible by groups (as torch), arrays of the wrong type or length, an eps that is
 * negative or not a finite f32.
 *
 * Numerics: a (sample, group) is a contiguous row of (C / groups) x L elements, and the kernel
 * normalises it in two passes over memory: the statistics from per-chunk means and squared
 * deviations merged pairwise (Chan et al.), which stays exact to a few f32 ULPs for rows like
 * 100 ± 1 where a one-pass E[x²] − E[x]² in f32 loses most of the variance's digits (a test shows
 * the one-pass formula failing the same tolerance); then the row is read again and written.
 *
 * Speed: one 256-invocation workgroup per (sample, group), so the cost is two reads and one write
 * of `x` (declared as such: 12 bytes per element; the second read is issued last block first, so
 * part of it comes from L2). With few rows only that many multiprocessors work. On the H200
 * (harness/baselines/nvidia-h200-log/signal-conv-norm-snake.txt, GPU timestamps, with weight and
 * bias; the read probe of the same run 4,520 GB/s): 16 x 256 channels x 4,096, 256 groups (4,096
 * rows), 4,586 GB/s counted that way, 101% of the probe (the L2-served second read); the spec's
 * VAE block, 512 channels in 32 groups at 128 x 128, 3,065 GB/s (68%) at batch 8 (256 rows) but
 * only 639 GB/s (14%) at batch 1, where 32 rows keep 32 of the 132 multiprocessors busy (torch's
 * own kernel: 256 GB/s there). Spreading one group over the GPU needs a second dispatch (partial
 * statistics, then normalisation), and a plan here is one dispatch: that is the change the
 * batch-1 shape is waiting for.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import { type GroupNormArgs, type GroupNormShape, validateGroupNorm, validateGroupNormShape } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

const PARAMS: readonly ParamField[] = [
  { name: "rows", type: "u32" },
  { name: "d", type: "u32" },
  { name: "l", type: "u32" },
  { name: "per_group", type: "u32" },
  { name: "groups", type: "u32" },
  { name: "eps", type: "f32" },
  { name: "has_weight", type: "u32" },
  { name: "has_bias", type: "u32" },
];

/**
 * Plans `group_norm` on the GPU.
 *
 * @param gpu the device
 * @param shape `N`, `C`, `L`, `groups`, `eps`, and whether a weight and a bias are given
 * @param options kernel override
 * @returns the plan; bindings `x`, `weight`, `bias` (inputs; empty when absent) and `out`, one
 *   workgroup per (sample, group)
 */
export function groupNormPlan(
  gpu: ResidentDevice,
  shape: GroupNormShape & { weight?: boolean; bias?: boolean },
  options: KernelOptions = {},
): KernelPlan {
  const eps = validateGroupNormShape(shape);
  const { N, C, L, groups } = shape;
  const n = N * C * L;
  const hasWeight = shape.weight ?? false, hasBias = shape.bias ?? false;
  return {
    op: "group_norm",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "weight", dtype: "f32", length: hasWeight ? C : 0, role: "input" },
      { name: "bias", dtype: "f32", length: hasBias ? C : 0, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams(PARAMS, {
      rows: N * groups,
      d: (C / groups) * L,
      l: L,
      per_group: C / groups,
      groups,
      eps,
      has_weight: Number(hasWeight),
      has_bias: Number(hasBias),
    }, "group_norm"),
    workgroups: foldWorkgroups(N * groups, gpu.limits.maxComputeWorkgroupsPerDimension),
    // x read twice (statistics, then normalisation) and written once, weight and bias once; per
    // element about 4 FLOPs for the statistics and 4 for the normalisation.
    cost: { bytes: 12 * n + 4 * C * (Number(hasWeight) + Number(hasBias)), flops: 8 * n },
  };
}

/**
 * Group normalisation on the GPU.
 *
 * @param gpu the device
 * @param args as {@link groupNorm}
 * @param options kernel override
 * @returns the result, `[N, C, L]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { groupNormGpu } from "@xpu/ops/ops/group_norm";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([1, 3, 5, 7, 2, 4, 6, 8]);
 * const out = await groupNormGpu(gpu, { x, N: 1, C: 4, L: 2, groups: 2, weight: new Float32Array([1, 2, 1, 2]) });
 * gpu.destroy();
 * ```
 */
export async function groupNormGpu(
  gpu: ResidentDevice,
  args: GroupNormArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateGroupNorm(args);
  const plan = groupNormPlan(
    gpu,
    { ...args, weight: args.weight !== undefined, bias: args.bias !== undefined },
    options,
  );
  const empty = new Float32Array(0);
  const [out] = await gpu.run(plan, [args.x, args.weight ?? empty, args.bias ?? empty]);
  return out as Float32Array;
}
