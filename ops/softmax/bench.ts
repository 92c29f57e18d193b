/**
 * Benchmark cases of softmax: rows held in registers (up to 8,192 elements, short rows sharing a
 * workgroup) and long rows streamed in chunks (65,536 elements, read twice).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, softmaxPlan } from "./mod.ts";
import type { SoftmaxVariant } from "./kernels.gen.ts";

/** softmax's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ rows: number; cols: number }, SoftmaxVariant>({
    op: "softmax",
    entry: "kernel",
    sources: KERNELS,
    gpu: [
      { rows: 4096, cols: 4096 },
      { rows: 8192, cols: 8192 },
      { rows: 65536, cols: 1024 },
      { rows: 1024, cols: 65536 },
    ],
    quick: [{ rows: 64, cols: 256 }, { rows: 256, cols: 1024 }, { rows: 4, cols: 12288 }],
    label: ({ rows, cols }) => `${rows}x${cols}`,
    plan: (gpu, shape, options) => softmaxPlan(gpu, shape, options),
    inputs: ({ rows, cols }, seed) => [randomInput(rows * cols, seed, 0, 8)],
  }),
];
