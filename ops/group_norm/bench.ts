/**
 * Benchmark cases of group_norm: the VAE decoder block of the spec (512 channels, 32 groups,
 * 128 x 128, batch 1: 32 rows), the same at batch 8 (256 rows), and many small groups
 * (instance-norm-like, 4,096 rows), all with weight and bias. Each entry point is timed alone at
 * every shape: `kernel` (the rows path) and the split path's two dispatches, `stats` and `apply`
 * (whose inputs are x and random summaries); the split path's time is the sum of its two.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { groupNormPlan, KERNELS, SPLIT_TARGETS, splitPieces } from "./mod.ts";

type Shape = { N: number; C: number; L: number; groups: number };
type Measured = Shape & { target: keyof typeof SPLIT_TARGETS };

const GPU: Shape[] = [
  { N: 1, C: 512, L: 128 * 128, groups: 32 },
  { N: 8, C: 512, L: 128 * 128, groups: 32 },
  { N: 16, C: 256, L: 64 * 64, groups: 256 },
  // Measurement only: 1,024 rows of 65,536.
  { N: 64, C: 256, L: 64 * 64, groups: 16 },
];
const QUICK: Shape[] = [{ N: 1, C: 64, L: 1024, groups: 32 }, { N: 2, C: 6, L: 1023, groups: 3 }];
const both = (shapes: Shape[]): Measured[] =>
  shapes.flatMap((s) => [{ ...s, target: "wide" as const }, { ...s, target: "fill" as const }]);
const label = ({ N, C, L, groups }: Shape) => `${N}x${C}x${L}:g${groups}`;
const splitLabel = (s: Measured) => `${label(s)}:${s.target}`;
const plan =
  (path: "rows" | "split", step: number) => (gpu: Parameters<typeof groupNormPlan>[0], s: Measured | Shape) =>
    groupNormPlan(gpu, { ...s, weight: true, bias: true }, { path }, SPLIT_TARGETS["target" in s ? s.target : "wide"])
      .steps[step];
const summaries = (s: Measured, seed: number) => {
  const d = (s.C / s.groups) * s.L;
  const length = d % 4 === 0 && s.L % 4 === 0 ? d / 4 : d;
  const { pieces } = splitPieces(s.N * s.groups, length, SPLIT_TARGETS[s.target]);
  return randomInput(4 * s.N * s.groups * pieces, seed).map(Math.abs);
};

/** group_norm's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape>({
    op: "group_norm",
    entry: "kernel",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: plan("rows", 0),
    inputs: ({ N, C, L }, seed) => [randomInput(N * C * L, seed), randomInput(C, seed + 1), randomInput(C, seed + 2)],
  }),
  defineCase<Measured>({
    op: "group_norm",
    entry: "stats",
    sources: KERNELS,
    gpu: both(GPU),
    quick: both(QUICK),
    label: splitLabel,
    plan: plan("split", 0),
    inputs: ({ N, C, L }, seed) => [randomInput(N * C * L, seed)],
  }),
  defineCase<Measured>({
    op: "group_norm",
    entry: "apply",
    sources: KERNELS,
    gpu: both(GPU),
    quick: both(QUICK),
    label: splitLabel,
    plan: plan("split", 1),
    inputs: (s, seed) => [
      randomInput(s.N * s.C * s.L, seed),
      summaries(s, seed + 3),
      randomInput(s.C, seed + 1),
      randomInput(s.C, seed + 2),
    ],
  }),
];
