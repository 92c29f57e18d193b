/**
 * Benchmark cases of scatter: every source row added into an output row as wide as itself, at
 * random columns (so about a third of the output's slots receive nothing and some several).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, scatterPlan } from "./mod.ts";

interface Shape {
  N: number;
  K: number;
  D: number;
}

/**
 * Column indices uniform in `[0, D)` (xorshift32).
 *
 * @param length number of indices
 * @param D columns of the output
 * @param seed any integer
 * @returns the indices
 */
function randomColumns(length: number, D: number, seed: number): Int32Array {
  const out = new Int32Array(length);
  let s = (seed ^ 0x68e31da4) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = s % D;
  }
  return out;
}

/** scatter's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape>({
    op: "scatter",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ N: 2048, K: 4096, D: 4096 }, { N: 8192, K: 4096, D: 4096 }, { N: 4096, K: 1024, D: 8192 }],
    quick: [{ N: 16, K: 256, D: 256 }, { N: 64, K: 1024, D: 1024 }],
    label: ({ N, K, D }) => `${N}x${K}-into-${D}`,
    plan: (gpu, shape, options) => scatterPlan(gpu, shape, options),
    inputs: ({ N, K, D }, seed) => [randomInput(N * K, seed), randomColumns(N * K, D, seed + 1)],
  }),
];
