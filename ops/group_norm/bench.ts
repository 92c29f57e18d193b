/**
 * Benchmark cases of group_norm: the VAE decoder block of the spec (512 channels, 32 groups,
 * 128 x 128, batch 1: 32 rows), the same at batch 8 (256 rows), many small groups
 * (instance-norm-like, 4,096 rows), and the same decoder's 256-channel block at a 1024 x 1024 image
 * (512 x 512, batch 1: 256 MiB), all with weight and bias, at every shape: `kernel` (the rows
 * path), the split path as it runs, `stats+apply` (both dispatches in one pass, between one pair of
 * timestamps, its cost the operation's, as the rows path's: x read twice, out written once), and the
 * split path's two dispatches alone, `stats` and `apply` (whose inputs are x and random summaries);
 * and `fused`, the split path's pieces and blocks in one dispatch (its state cleared before each
 * timed pass, outside the timestamps), at the same shapes, plus the VAE's GroupNorm -> SiLU at
 * batch 1 (`:silu`) on `stats+apply` and `fused`.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { groupNormPlan, groupNormSplit, KERNELS } from "./mod.ts";
import type { GroupNormVariant } from "./kernels.gen.ts";

type Shape = { N: number; C: number; L: number; groups: number; silu?: boolean };

const GPU: Shape[] = [
  { N: 1, C: 512, L: 128 * 128, groups: 32 },
  { N: 8, C: 512, L: 128 * 128, groups: 32 },
  { N: 16, C: 256, L: 64 * 64, groups: 256 },
  { N: 1, C: 256, L: 512 * 512, groups: 32 },
];
const QUICK: Shape[] = [{ N: 1, C: 64, L: 1024, groups: 32 }, { N: 2, C: 6, L: 1023, groups: 3 }, {
  N: 1,
  C: 8,
  L: 4096,
  groups: 2,
}];
const SILU: Shape[] = [{ N: 1, C: 512, L: 128 * 128, groups: 32, silu: true }];
const label = ({ N, C, L, groups, silu }: Shape) => `${N}x${C}x${L}:g${groups}${silu ? ":silu" : ""}`;
const affine = ({ silu, ...s }: Shape) => ({
  ...s,
  weight: true,
  bias: true,
  activation: silu ? "silu" as const : undefined,
});
const weights = (C: number, seed: number) => [randomInput(C, seed + 1), randomInput(C, seed + 2)];

/** group_norm's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, GroupNormVariant>({
    op: "group_norm",
    entry: "kernel",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => groupNormPlan(gpu, affine(shape), { ...options, path: "rows" }).steps[0],
    inputs: ({ N, C, L }, seed) => [randomInput(N * C * L, seed), ...weights(C, seed)],
  }),
  defineCase<Shape, GroupNormVariant>({
    op: "group_norm",
    entry: "stats+apply",
    sources: KERNELS,
    gpu: [...GPU, ...SILU],
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => groupNormPlan(gpu, affine(shape), { ...options, path: "split" }).sequence!,
    inputs: ({ N, C, L }, seed) => [randomInput(N * C * L, seed), ...weights(C, seed)],
  }),
  defineCase<Shape, GroupNormVariant>({
    op: "group_norm",
    entry: "stats",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => groupNormPlan(gpu, affine(shape), { ...options, path: "split" }).steps[0],
    inputs: ({ N, C, L }, seed) => [randomInput(N * C * L, seed)],
  }),
  defineCase<Shape, GroupNormVariant>({
    op: "group_norm",
    entry: "apply",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => groupNormPlan(gpu, affine(shape), { ...options, path: "split" }).steps[1],
    inputs: (shape, seed) => {
      const { rows, chunks } = groupNormSplit(shape);
      // Summaries (count, mean, M2, unused) with positive counts and M2.
      const partials = randomInput(4 * rows * chunks, seed + 3).map(Math.abs);
      return [randomInput(shape.N * shape.C * shape.L, seed), partials, ...weights(shape.C, seed)];
    },
  }),
  defineCase<Shape, GroupNormVariant>({
    op: "group_norm",
    entry: "fused",
    sources: KERNELS,
    gpu: [...GPU, ...SILU],
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => groupNormPlan(gpu, affine(shape), { ...options, path: "fused" }).sequence!,
    inputs: ({ N, C, L }, seed) => [randomInput(N * C * L, seed), ...weights(C, seed)],
  }),
];
