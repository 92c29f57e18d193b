/**
 * Benchmark cases of permute: a batch of matrix transposes (`[B, M, N] -> [B, N, M]`), the first
 * and last axes swapped around a middle one (`[A, B, C] -> [C, B, A]`), both with the last axis
 * moving, and an attention head split (`[B, S, H, D] -> [B, H, S, D]`), with the last axis kept.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, permutePlan } from "./mod.ts";
import type { PermuteVariant } from "./kernels.gen.ts";

interface Shape {
  shape: number[];
  dims: number[];
}

/** permute's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, PermuteVariant>({
    op: "permute",
    entry: "kernel",
    sources: KERNELS,
    gpu: [
      { shape: [64, 512, 2048], dims: [0, 2, 1] },
      { shape: [64, 512, 2048], dims: [2, 1, 0] },
      { shape: [32, 128, 64, 64], dims: [0, 2, 1, 3] },
      { shape: [16, 2048, 32, 128], dims: [0, 2, 1, 3] },
    ],
    quick: [
      { shape: [4, 64, 128], dims: [0, 2, 1] },
      { shape: [64, 8, 128], dims: [2, 1, 0] },
      { shape: [2, 64, 16, 32], dims: [0, 2, 1, 3] },
    ],
    label: ({ shape, dims }) => `${shape.join("x")}-perm${dims.join("")}`,
    plan: (gpu, shape, options) => permutePlan(gpu, shape, options),
    inputs: ({ shape }, seed) => [randomInput(shape.reduce((p, d) => p * d, 1), seed)],
  }),
];
