/**
 * Benchmark cases of transpose: square matrices from 16 MiB to 256 MiB, and a wide one; and the
 * placement of a block of columns (`placeColumns`, plain and transposed) at the shapes of the Llama
 * engine's prefill: a chunk of 512 rows, a Sarashina2.2-1B QKV (3,072 columns) or gate/up block
 * (8,192 of 16,384), and a 102,400-column head's block of 32,768.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, placeColumnsPlan, type PlaceColumnsShape, transposePlan } from "./mod.ts";
import type { TransposeVariant } from "./kernels.gen.ts";

const PLACE: PlaceColumnsShape[] = [
  { rows: 512, cols: 3072, outCols: 3072, col0: 0 },
  { rows: 512, cols: 8192, outCols: 16384, col0: 8192 },
  { rows: 8, cols: 32768, outCols: 102400, col0: 65536 },
];
const PLACE_QUICK: PlaceColumnsShape[] = [{ rows: 16, cols: 96, outCols: 256, col0: 128 }];

function place(transposed: boolean): BenchCase {
  return defineCase<PlaceColumnsShape, TransposeVariant>({
    op: "transpose",
    entry: transposed ? "place_transposed" : "place",
    sources: KERNELS,
    gpu: PLACE.map((s) => ({ ...s, transposed })),
    quick: PLACE_QUICK.map((s) => ({ ...s, transposed })),
    label: ({ rows, cols, outCols, col0 }) => `${rows}x${cols}x${outCols}x${col0}`,
    plan: (gpu, shape, options) => placeColumnsPlan(gpu, shape, options),
    inputs: ({ rows, cols, outCols }, seed) => [randomInput(rows * cols, seed), randomInput(rows * outCols, seed + 1)],
  });
}

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
  place(false),
  place(true),
];
