/**
 * Benchmark cases of scatter: every source row added into an output row as wide as itself, at
 * random columns (so about a third of the output's slots receive nothing and some several); and
 * indexCopy at a KV cache's shapes (8 heads of 128 values, 4,096 positions): one decode position,
 * and a 512-token prefill's positions.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { indexCopyPlan, KERNELS, scatterPlan } from "./mod.ts";
import type { ScatterVariant } from "./kernels.gen.ts";

interface Shape {
  rows: number;
  indexCols: number;
  cols: number;
}

/**
 * Column indices uniform in `[0, cols)` (xorshift32).
 *
 * @param length number of indices
 * @param cols columns of the output
 * @param seed any integer
 * @returns the indices
 */
function randomColumns(length: number, cols: number, seed: number): Int32Array {
  const out = new Int32Array(length);
  let s = (seed ^ 0x68e31da4) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = s % cols;
  }
  return out;
}

/** scatter's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, ScatterVariant>({
    op: "scatter",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ rows: 2048, indexCols: 4096, cols: 4096 }, { rows: 8192, indexCols: 4096, cols: 4096 }, {
      rows: 4096,
      indexCols: 1024,
      cols: 8192,
    }],
    quick: [{ rows: 16, indexCols: 256, cols: 256 }, { rows: 64, indexCols: 1024, cols: 1024 }],
    label: ({ rows, indexCols, cols }) => `${rows}x${indexCols}-into-${cols}`,
    plan: (gpu, shape, options) => scatterPlan(gpu, shape, options),
    inputs: (
      { rows, indexCols, cols },
      seed,
    ) => [randomInput(rows * indexCols, seed), randomColumns(rows * indexCols, cols, seed + 1)],
  }),
  defineCase<{ outer: number; rows: number; cols: number; indexLength: number }, ScatterVariant>({
    op: "indexCopy",
    entry: "index_copy",
    sources: KERNELS,
    gpu: [{ outer: 8, rows: 4096, cols: 128, indexLength: 1 }, { outer: 8, rows: 4096, cols: 128, indexLength: 512 }],
    quick: [{ outer: 8, rows: 256, cols: 128, indexLength: 1 }, { outer: 8, rows: 256, cols: 128, indexLength: 64 }],
    label: ({ outer, rows, cols, indexLength }) => `${indexLength}-rows-into-${outer}x${rows}x${cols}`,
    plan: (gpu, shape, options) => indexCopyPlan(gpu, shape, options),
    // The positions a cache update writes: consecutive rows from the middle of the cache.
    inputs: ({ outer, rows, cols, indexLength }, seed) => [
      randomInput(outer * indexLength * cols, seed),
      Int32Array.from({ length: indexLength }, (_, i) => (rows >> 1) - (indexLength >> 1) + i),
      randomInput(outer * rows * cols, seed + 1),
    ],
  }),
];
