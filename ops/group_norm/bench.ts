/**
 * Benchmark cases of group_norm: the VAE decoder block of the spec (512 channels, 32 groups,
 * 128 x 128, batch 1: only 32 workgroups, see mod.ts), the same at batch 8 (256 workgroups), and
 * many small groups (instance-norm-like), all with weight and bias.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { groupNormPlan, KERNELS } from "./mod.ts";

type Shape = { N: number; C: number; L: number; groups: number };

/** group_norm's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape>({
    op: "group_norm",
    entry: "kernel",
    sources: KERNELS,
    gpu: [
      { N: 1, C: 512, L: 128 * 128, groups: 32 },
      { N: 8, C: 512, L: 128 * 128, groups: 32 },
      { N: 16, C: 256, L: 64 * 64, groups: 256 },
    ],
    quick: [{ N: 1, C: 64, L: 1024, groups: 32 }, { N: 2, C: 6, L: 1023, groups: 3 }],
    label: ({ N, C, L, groups }) => `${N}x${C}x${L}:g${groups}`,
    plan: (gpu, shape, options) => groupNormPlan(gpu, { ...shape, weight: true, bias: true }, options),
    inputs: ({ N, C, L }, seed) => [randomInput(N * C * L, seed), randomInput(C, seed + 1), randomInput(C, seed + 2)],
  }),
];
