/**
 * Benchmark cases of matvec: f32, q8 and q4 GEMV at a square size and at Llama decode shapes.
 *
 * Shapes are `N x K` (rows of the weight, then its columns): 8192 x 8192, and Llama-3-8B's attention
 * projection (4096 x 4096), MLP up/gate (14336 x 4096) and down (4096 x 14336) projections, and a
 * DeepSeek-sized output head (102400 x 1792). Each entry point's variant is resolved for the device,
 * or forced one by one with `--all-variants`. The quantized GEMVs have two entry points each, the
 * default and `_rows64` for weights of many rows; each is timed at every shape, whichever the plans
 * would take there, so the report shows where one overtakes the other (the evidence for
 * `QUANTIZED_TALL_MIN_ROWS`). The cost is the bytes each kernel must read (the weight as stored: f32,
 * or codes and scales) plus x and y.
 *
 * @module
 */

import { type BenchCase, defineCase, entryOptions, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, matvecPlan, matvecQ4G128Plan, matvecQ8Plan, type MatvecShape } from "./mod.ts";
import type { MatvecVariant } from "./kernels.gen.ts";

const label = ({ N, K }: MatvecShape) => `${N}x${K}`;
const GPU: MatvecShape[] = [
  { N: 4096, K: 4096 },
  { N: 8192, K: 8192 },
  { N: 14336, K: 4096 },
  { N: 4096, K: 14336 },
  { N: 102400, K: 1792 },
];
const QUICK: MatvecShape[] = [{ N: 256, K: 256 }, { N: 1024, K: 1024 }, { N: 4096, K: 1024 }];

/** Random words: every code a decoder may meet (the decode's cost does not depend on the values). */
function randomWords(length: number, seed: number): Uint32Array {
  return new Uint32Array(randomInput(length, seed).buffer);
}

function q8(entry: string): BenchCase {
  return defineCase<MatvecShape, MatvecVariant>({
    op: "matvecQ8",
    entry,
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => matvecQ8Plan(gpu, shape, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ N, K }, seed) => [
      randomWords(N * Math.ceil(K / 4), seed),
      randomInput(N, seed + 1, 0.001, 0.02),
      randomInput(K, seed + 2),
    ],
  });
}

function q4(entry: string): BenchCase {
  return defineCase<MatvecShape, MatvecVariant>({
    op: "matvecQ4G128",
    entry,
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => matvecQ4G128Plan(gpu, shape, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ N, K }, seed) => [
      randomWords(N * Math.ceil(K / 8), seed),
      randomInput(N * Math.ceil(K / 128), seed + 1, 0.01, 0.1),
      randomInput(K, seed + 2),
    ],
  });
}

/** matvec's benchmark cases (each entry point timed at every shape, whichever the plans would pick). */
export const BENCH: readonly BenchCase[] = [
  defineCase<MatvecShape, MatvecVariant>({
    op: "matvec",
    entry: "kernel",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => matvecPlan(gpu, shape, options),
    inputs: ({ N, K }, seed) => [randomInput(N * K, seed), randomInput(K, seed + 1)],
  }),
  q8("q8row"),
  q8("q8row_rows64"),
  q4("q4g128"),
  q4("q4g128_rows64"),
];
