/**
 * Benchmark cases of rmsnorm (one shared weight row): rows held in registers (up to 8,192
 * elements, short rows sharing a workgroup) and long rows streamed in chunks (65,536, read twice);
 * and `modulated`, adaLN over two items (a CFG batch) at Z-Image's width (3,840) for 4,096 tokens
 * each, scale alone as its blocks use it (`:items2`) and with a shift (`:items2:shift`).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, rmsnormPlan, rmsnormResidualPlan } from "./mod.ts";
import type { RmsnormVariant } from "./kernels.gen.ts";

/** rmsnorm's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ rows: number; cols: number }, RmsnormVariant>({
    op: "rmsnorm",
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
    plan: (gpu, { rows, cols }, options) => rmsnormPlan(gpu, { rows, cols, groups: 1, eps: 1e-6 }, options),
    inputs: ({ rows, cols }, seed) => [randomInput(rows * cols, seed), randomInput(cols, seed + 1)],
  }),
  defineCase<{ rows: number; cols: number; items: number; shift: boolean }, RmsnormVariant>({
    op: "rmsnorm",
    entry: "modulated",
    sources: KERNELS,
    gpu: [{ rows: 8192, cols: 3840, items: 2, shift: false }, { rows: 8192, cols: 3840, items: 2, shift: true }],
    quick: [{ rows: 64, cols: 256, items: 2, shift: false }, { rows: 6, cols: 1023, items: 3, shift: true }],
    label: ({ rows, cols, items, shift }) => `${rows}x${cols}:items${items}${shift ? ":shift" : ""}`,
    plan: (gpu, { rows, cols, items, shift }, options) =>
      rmsnormPlan(gpu, { rows, cols, groups: 1, eps: 1e-5, modulation: { rowsPerItem: rows / items, shift } }, options),
    inputs: ({ rows, cols, items, shift }, seed) => [
      randomInput(rows * cols, seed),
      randomInput(cols, seed + 1),
      randomInput(items * cols, seed + 2),
      shift ? randomInput(items * cols, seed + 3) : new Float32Array(0),
    ],
  }),
  defineCase<{ rows: number; cols: number; add: boolean }, RmsnormVariant>({
    op: "rmsnorm",
    entry: "residual",
    sources: KERNELS,
    // The Llama engine's prefill: a chunk of 512 rows at Sarashina2.2-1B's 2,048 and Llama-3-8B's 4,096.
    gpu: [{ rows: 512, cols: 2048, add: true }, { rows: 512, cols: 4096, add: true }, {
      rows: 512,
      cols: 2048,
      add: false,
    }],
    quick: [{ rows: 16, cols: 2048, add: true }, { rows: 3, cols: 300, add: false }],
    label: ({ rows, cols, add }) => `${rows}x${cols}${add ? ":add" : ""}`,
    plan: (gpu, shape, options) => rmsnormResidualPlan(gpu, { ...shape, eps: 1e-5 }, options),
    inputs: ({ rows, cols }, seed) => [
      randomInput(rows * cols, seed),
      randomInput(rows * cols, seed + 1),
      randomInput(cols, seed + 2),
    ],
  }),
];
