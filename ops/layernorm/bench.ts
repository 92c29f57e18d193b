/**
 * Benchmark cases of layernorm (with weight and bias): rows held in registers (up to 8,192
 * elements, short rows sharing a workgroup) and long rows streamed in chunks (65,536, read twice).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, layernormPlan } from "./mod.ts";

/** layernorm's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ rows: number; cols: number }>({
    op: "layernorm",
    entry: "kernel",
    sources: KERNELS,
    gpu: [
      { rows: 1024, cols: 1024 },
      { rows: 4096, cols: 4096 },
      { rows: 8192, cols: 8192 },
      { rows: 65536, cols: 1024 },
      { rows: 1024, cols: 65536 },
    ],
    quick: [{ rows: 64, cols: 256 }, { rows: 256, cols: 1024 }, { rows: 4, cols: 12288 }],
    label: ({ rows, cols }) => `${rows}x${cols}`,
    plan: (gpu, { rows, cols }, options) =>
      layernormPlan(gpu, { rows, cols, hasWeight: true, hasBias: true, eps: 1e-5 }, options),
    inputs: (
      { rows, cols },
      seed,
    ) => [randomInput(rows * cols, seed), randomInput(cols, seed + 1), randomInput(cols, seed + 2)],
  }),
];
