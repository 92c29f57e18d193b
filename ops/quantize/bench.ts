/**
 * Benchmark cases of quantize: per-row absmax int8 of square and tall f32 matrices, the codes written
 * as 4-byte integers (`kernel`, as `quantize` returns them) and packed four to a word (`packed`, the
 * q8 wire format, also at the shapes of ops/matmul's dp4a activations); and the q4 group-128 format
 * of the same matrices (`packed_q4`).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, quantizePackedPlan, quantizePackedQ4Plan, quantizePlan } from "./mod.ts";
import type { QuantizeVariant } from "./kernels.gen.ts";

const gpu = [{ rows: 2048, cols: 2048 }, { rows: 4096, cols: 4096 }, { rows: 8192, cols: 8192 }, {
  rows: 32768,
  cols: 2048,
}];
const quick = [{ rows: 64, cols: 256 }, { rows: 1024, cols: 1024 }];
/**
 * The int8 activations of ops/matmul's dp4a products at the engine's 1B prefill (512 tokens): the
 * inputs of the qkv, output and gate/up products (hidden 1792) and of the down-projection (FFN 6272).
 */
const dp4aInputs = [{ rows: 512, cols: 1792 }, { rows: 512, cols: 6272 }];
const label = ({ rows, cols }: { rows: number; cols: number }) => `${rows}x${cols}`;

/** quantize's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ rows: number; cols: number }, QuantizeVariant>({
    op: "quantize",
    entry: "kernel",
    sources: KERNELS,
    gpu,
    quick,
    label,
    plan: (device, shape, options) => quantizePlan(device, shape, options),
    inputs: ({ rows, cols }, seed) => [randomInput(rows * cols, seed)],
  }),
  defineCase<{ rows: number; cols: number }, QuantizeVariant>({
    op: "quantize",
    entry: "packed",
    sources: KERNELS,
    gpu: [...gpu, ...dp4aInputs],
    quick,
    label,
    plan: (device, shape, options) => quantizePackedPlan(device, shape, options),
    inputs: ({ rows, cols }, seed) => [randomInput(rows * cols, seed)],
  }),
  defineCase<{ rows: number; cols: number }, QuantizeVariant>({
    op: "quantize",
    entry: "packed_q4",
    sources: KERNELS,
    gpu,
    quick,
    label,
    plan: (device, shape, options) => quantizePackedQ4Plan(device, shape, options),
    inputs: ({ rows, cols }, seed) => [randomInput(rows * cols, seed)],
  }),
];
