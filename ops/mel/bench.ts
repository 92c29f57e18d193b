/**
 * Benchmark cases of mel: the power spectrum (entry point `power`) and the mel projection with
 * decibels (`kernel`) of 30 s of 24 kHz audio at nFft 1024, hopLength 256 (2,813 frames of 513 bins), with
 * 100 bands (Vocos) and 128 (torchaudio's default), and a batch of 8 one-second clips.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, melFilterbank, melPlan, powerSpectrumPlan } from "./mod.ts";
import type { MelVariant } from "./kernels.gen.ts";

interface Shape {
  rows: number;
  nFreqs: number;
  nMels: number;
}

const label = ({ rows, nFreqs, nMels }: Shape) => `${rows}x${nFreqs}-to-${nMels}`;

/** mel's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ rows: number; bins: number }, MelVariant>({
    op: "mel",
    entry: "power",
    sources: KERNELS,
    gpu: [{ rows: 2813, bins: 513 }, { rows: 8 * 2813, bins: 513 }],
    quick: [{ rows: 94, bins: 513 }],
    label: ({ rows, bins }) => `${rows}x${bins}`,
    plan: (gpu, shape, options) => powerSpectrumPlan(gpu, shape, options),
    inputs: ({ rows, bins }, seed) => [randomInput(rows * bins * 2, seed)],
  }),
  defineCase<Shape, MelVariant>({
    op: "mel",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ rows: 2813, nFreqs: 513, nMels: 100 }, { rows: 2813, nFreqs: 513, nMels: 128 }, {
      rows: 8 * 94,
      nFreqs: 513,
      nMels: 100,
    }],
    quick: [{ rows: 94, nFreqs: 513, nMels: 100 }],
    label,
    plan: (gpu, { rows, nFreqs, nMels }, options) => melPlan(gpu, { rows, nFreqs, nMels, db: true }, options),
    inputs: ({ rows, nFreqs, nMels }, seed) => [
      randomInput(rows * nFreqs, seed),
      melFilterbank({ nFreqs, nMels, sampleRate: 24000 }),
    ],
  }),
];
