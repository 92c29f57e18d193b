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
  defineCase<{ rows: number; cols: number }>({
    op: "quantize",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ rows: 2048, cols: 2048 }, { rows: 4096, cols: 4096 }, { rows: 8192, cols: 8192 }, {
      rows: 32768,
      cols: 2048,
    }],
    quick: [{ rows: 64, cols: 256 }, { rows: 1024, cols: 1024 }],
    label: ({ rows, cols }) => `${rows}x${cols}`,
    plan: (gpu, shape, options) => quantizePlan(gpu, shape, options),
    inputs: ({ rows, cols }, seed) => [randomInput(rows * cols, seed)],
  }),
];
