/**
 * Benchmark cases of transpose: square matrices from 16 MiB to 256 MiB, and a wide one.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, transposePlan } from "./mod.ts";
import type { TransposeVariant } from "./kernels.gen.ts";

/** transpose's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ rows: number; cols: number }, TransposeVariant>({
    op: "transpose",
    entry: "kernel",
    sources: KERNELS,
    gpu: [
      { rows: 2048, cols: 2048 },
      { rows: 4096, cols: 4096 },
      { rows: 8192, cols: 8192 },
      { rows: 4096, cols: 16384 },
    ],
    quick: [{ rows: 64, cols: 64 }, { rows: 256, cols: 384 }, { rows: 512, cols: 512 }],
    label: ({ rows, cols }) => `${rows}x${cols}`,
    plan: (gpu, shape, options) => transposePlan(gpu, shape, options),
    inputs: ({ rows, cols }, seed) => [randomInput(rows * cols, seed)],
  }),
];
