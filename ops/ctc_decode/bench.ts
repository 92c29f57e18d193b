/**
 * Benchmark cases of ctc_decode: a batch of 16 wav2vec2-style sequences (30 s at 50 frames/s, 32
 * characters), and a batch of 8 with a 1,024-token BPE vocabulary, where reading the logits dominates.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { ctcDecodePlan, KERNELS } from "./mod.ts";
import type { CtcDecodeVariant } from "./kernels.gen.ts";

/** ctc_decode's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ B: number; T: number; C: number }, CtcDecodeVariant>({
    op: "ctcDecode",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ B: 16, T: 1500, C: 32 }, { B: 8, T: 1500, C: 1024 }, { B: 64, T: 1500, C: 1024 }],
    quick: [{ B: 4, T: 300, C: 32 }, { B: 2, T: 100, C: 129 }],
    label: ({ B, T, C }) => `${B}x${T}x${C}`,
    plan: (gpu, shape, options) => ctcDecodePlan(gpu, shape, options),
    inputs: ({ B, T, C }, seed) => [randomInput(B * T * C, seed), new Int32Array(B).fill(T)],
  }),
];
