/**
 * Benchmark cases of layernorm (with weight and bias): rows held in registers (up to 8,192
 * elements, short rows sharing a workgroup) and long rows streamed in chunks (65,536, read twice);
 * and `modulated` without weight or bias, adaLN over two items (a CFG batch) of 4,096 tokens at
 * Anima's width (2,048) with scale and shift (`:items2:shift`) and at Z-Image's (3,840) with a scale
 * alone, as its final layer (`:items2`).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, layernormPlan } from "./mod.ts";
import type { LayernormVariant } from "./kernels.gen.ts";

/** layernorm's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ rows: number; cols: number }, LayernormVariant>({
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
  defineCase<{ rows: number; cols: number; items: number; shift: boolean }, LayernormVariant>({
    op: "layernorm",
    entry: "modulated",
    sources: KERNELS,
    gpu: [{ rows: 8192, cols: 2048, items: 2, shift: true }, { rows: 8192, cols: 3840, items: 2, shift: false }],
    quick: [{ rows: 64, cols: 256, items: 2, shift: true }, { rows: 6, cols: 1023, items: 3, shift: false }],
    label: ({ rows, cols, items, shift }) => `${rows}x${cols}:items${items}${shift ? ":shift" : ""}`,
    plan: (gpu, { rows, cols, items, shift }, options) =>
      layernormPlan(gpu, { rows, cols, eps: 1e-6, modulation: { rowsPerItem: rows / items, shift } }, options),
    inputs: ({ rows, cols, items, shift }, seed) => [
      randomInput(rows * cols, seed),
      new Float32Array(0),
      new Float32Array(0),
      randomInput(items * cols, seed + 1),
      shift ? randomInput(items * cols, seed + 2) : new Float32Array(0),
    ],
  }),
];
