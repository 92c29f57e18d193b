/**
 * Benchmark cases of gather: rows of an embedding-like table, index distinct (the cost assumes
 * each selected row is read once, so repeats, which a cache could serve, are not drawn).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { gatherPlan, gatherQuantizedBlocksPlan, KERNELS, quantizedRowWords } from "./mod.ts";
import type { GatherVariant } from "./kernels.gen.ts";

interface Shape {
  rows: number;
  cols: number;
  indexLength: number;
}

/**
 * `indexLength` distinct row indices in `[0, rows)`, in random order (a seeded partial Fisher-Yates
 * shuffle).
 *
 * @param rows rows of the table
 * @param indexLength indices wanted, at most rows
 * @param seed any integer
 * @returns the index
 */
function distinctIndex(rows: number, indexLength: number, seed: number): Int32Array {
  const order = Int32Array.from({ length: rows }, (_, i) => i);
  let s = (seed ^ 0x2545f491) >>> 0 || 1;
  for (let i = 0; i < indexLength; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    const j = i + (s % (rows - i));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order.slice(0, indexLength);
}

/**
 * A quantized table's gather (`gatherQuantized`), whole in one binding, at an embedding of Sarashina2.2-1B's
 * shape (102,400 x 2,048) for a prefill chunk of 512 distinct ids and for the one id of a decode step.
 */
function quantized(format: "q8" | "q4g128"): BenchCase {
  return defineCase<Shape, GatherVariant>({
    op: "gather",
    entry: format === "q8" ? "q8row" : "q4g128",
    sources: KERNELS,
    gpu: [{ rows: 102400, cols: 2048, indexLength: 512 }, { rows: 102400, cols: 2048, indexLength: 1 }],
    quick: [{ rows: 4096, cols: 256, indexLength: 64 }],
    label: ({ rows, cols, indexLength }) => `${rows}x${cols}-${indexLength}rows`,
    plan: (gpu, shape, options) =>
      gatherQuantizedBlocksPlan(gpu, { ...shape, format, blockRows: shape.rows }, options).sequence,
    inputs: ({ rows, cols, indexLength }, seed) => {
      const words = quantizedRowWords(format, cols);
      return [
        new Uint32Array(randomInput(rows * words.words, seed).buffer),
        randomInput(rows * words.scales, seed + 1, 0.001, 0.02),
        distinctIndex(rows, indexLength, seed + 2),
      ];
    },
  });
}

/** gather's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, GatherVariant>({
    op: "gather",
    entry: "kernel",
    sources: KERNELS,
    // Each shape moves well past the 50 MB L2 per pass: the whole table is one binding, so the
    // timing does not rotate input sets, and the rows read must not fit in the cache themselves.
    gpu: [{ rows: 32768, cols: 4096, indexLength: 8192 }, { rows: 131072, cols: 1024, indexLength: 16384 }],
    quick: [{ rows: 256, cols: 64, indexLength: 128 }, { rows: 4096, cols: 256, indexLength: 1024 }],
    label: ({ rows, cols, indexLength }) => `${rows}x${cols}-${indexLength}rows`,
    plan: (gpu, shape, options) => gatherPlan(gpu, shape, options),
    inputs: (
      { rows, cols, indexLength },
      seed,
    ) => [randomInput(rows * cols, seed), distinctIndex(rows, indexLength, seed + 1)],
  }),
  quantized("q8"),
  quantized("q4g128"),
];
