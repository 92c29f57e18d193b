/**
 * Benchmark cases of quantize: per-row absmax int8 of square and tall f32 matrices (codes written
 * as 4-byte integers, as the op returns them).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, quantizePlan } from "./mod.ts";

/** quantize's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ N: number; K: number }>({
    op: "quantize",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ N: 2048, K: 2048 }, { N: 4096, K: 4096 }, { N: 8192, K: 8192 }, { N: 32768, K: 2048 }],
    quick: [{ N: 64, K: 256 }, { N: 1024, K: 1024 }],
    label: ({ N, K }) => `${N}x${K}`,
    plan: (gpu, shape, options) => quantizePlan(gpu, shape, options),
    inputs: ({ N, K }, seed) => [randomInput(N * K, seed)],
  }),
];
