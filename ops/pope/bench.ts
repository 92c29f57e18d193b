/**
 * Benchmark cases of pope: the table an absolute position encoding adds to the embeddings, at a
 * Llama-sized prefill (4,096 positions of width 4,096 = 32 heads x 128: 64 MiB written) and at a
 * smaller model, plus one decode row at position 8,191 (all 8,192 orders stepped through, one row
 * written).
 *
 * @module
 */

import { type BenchCase, defineCase } from "../../harness/bench_case.ts";
import { KERNELS, popeArguments, popePlan } from "./mod.ts";
import type { PopeVariant } from "./kernels.gen.ts";

/** pope's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ S: number; D: number; posOffset: number }, PopeVariant>({
    op: "pope",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ S: 4096, D: 4096, posOffset: 0 }, { S: 2048, D: 768, posOffset: 0 }, { S: 1, D: 4096, posOffset: 8191 }],
    quick: [{ S: 64, D: 256, posOffset: 0 }, { S: 33, D: 100, posOffset: 1 }],
    label: ({ S, D, posOffset }) => `${S}x${D}+${posOffset}`,
    plan: (gpu, shape, options) => popePlan(gpu, shape, options),
    inputs: ({ D }) => [popeArguments(D)],
  }),
];
