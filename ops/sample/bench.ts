/**
 * Benchmark cases of sample: the greedy choice and the seeded draw at language-model vocabularies
 * (Llama-2's 32,000, Sarashina2.2's 102,400, Qwen3's 151,936), and the constraint's mask. The draw is
 * timed with top-k 40 and top-p 0.95 (28 passes over the vocabulary, the most it makes) and with
 * temperature alone (3 passes). The cost is the least each must move: the logits once (and, for the
 * draw, the probabilities written once).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import {
  argmaxTokenPlan,
  KERNELS,
  maskLogitsPlan,
  packSampleOptions,
  sampleTokenPlan,
  type SampleVariant,
} from "./mod.ts";

interface Shape {
  vocab: number;
  filters?: boolean;
}
const GPU: Shape[] = [{ vocab: 32000 }, { vocab: 102400 }, { vocab: 151936 }];
const QUICK: Shape[] = [{ vocab: 4096 }, { vocab: 32000 }];
/** Tokens a loop records: more than the timed repetitions, so every step's write lands in the buffer. */
const STEPS = 4096;

/** sample's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, SampleVariant>({
    op: "sample",
    entry: "argmax",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label: ({ vocab }) => `${vocab}`,
    plan: (gpu, { vocab }, options) => argmaxTokenPlan(gpu, { vocab, steps: STEPS }, options),
    // logits, tokens, state, counter: the counters start at zero (the kernel keeps them so).
    inputs: ({ vocab }, seed) => [
      randomInput(vocab, seed, 0, 8),
      new Uint32Array(STEPS),
      new Uint32Array(4),
      new Uint32Array(2),
    ],
  }),
  defineCase<Shape, SampleVariant>({
    op: "sample",
    entry: "sample",
    sources: KERNELS,
    gpu: [...GPU.map((s) => ({ ...s, filters: true })), { vocab: 102400 }],
    quick: QUICK.map((s) => ({ ...s, filters: true })),
    label: ({ vocab, filters }) => `${vocab}${filters ? "x40x0.95" : ""}`,
    plan: (gpu, { vocab }, options) => sampleTokenPlan(gpu, { vocab, steps: STEPS }, options),
    inputs: ({ vocab, filters }, seed) => [
      randomInput(vocab, seed, 0, 8),
      new Uint32Array(STEPS),
      new Uint32Array(4),
      packSampleOptions(filters ? { temperature: 0.8, topK: 40, topP: 0.95, seed } : { temperature: 0.8, seed }),
    ],
  }),
  defineCase<Shape, SampleVariant>({
    op: "sample",
    entry: "mask",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label: ({ vocab }) => `${vocab}`,
    plan: (gpu, { vocab }, options) => maskLogitsPlan(gpu, { vocab }, options),
    inputs: ({ vocab }, seed) => [
      randomInput(vocab, seed),
      new Uint32Array(randomInput(Math.ceil(vocab / 32), seed + 1).buffer),
    ],
  }),
];
