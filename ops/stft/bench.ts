/**
 * Benchmark cases of stft (entry points `kernel`, the GEMM, and `fft`) and istft (`inverse`): 30 s of
 * 24 kHz audio at nFft 1024, hopLength 256 (the shape torch's cuFFT was timed at: 0.059 ms forward,
 * 0.33 ms inverse on the H200), a batch of 8 one-second clips, and nFft 1920 (Vocos at 48 kHz's size,
 * not a power of two, so not the FFT's). The tables are the real ones (`stftBasis` / `istftBasis`,
 * the Hann window and `fftTwiddles`).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { fftTwiddles, istftBasis, istftPlan, KERNELS, stftBasis, stftFftPlan, stftPlan, stftUsesFft } from "./mod.ts";
import { hannWindow, stftBins, stftFrames } from "./reference.ts";
import type { StftVariant } from "./kernels.gen.ts";

interface Shape {
  batch: number;
  length: number;
  nFft: number;
  hopLength: number;
}

const label = ({ batch, length, nFft, hopLength }: Shape) => `${batch}x${length}-nfft${nFft}-hop${hopLength}`;
const gpu: Shape[] = [
  { batch: 1, length: 720_000, nFft: 1024, hopLength: 256 },
  { batch: 8, length: 24_000, nFft: 1024, hopLength: 256 },
  { batch: 1, length: 1_440_000, nFft: 1920, hopLength: 480 },
];
const quick: Shape[] = [{ batch: 1, length: 24_000, nFft: 1024, hopLength: 256 }, {
  batch: 2,
  length: 4001,
  nFft: 400,
  hopLength: 100,
}];

/** stft's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, StftVariant>({
    op: "stft",
    entry: "kernel",
    sources: KERNELS,
    gpu,
    quick,
    label,
    plan: (device, shape, options) => stftPlan(device, shape, options),
    inputs: ({ batch, length, nFft }, seed) => [randomInput(batch * length, seed), stftBasis(nFft)],
  }),
  defineCase<Shape, StftVariant>({
    op: "stft",
    entry: "fft",
    sources: KERNELS,
    gpu: gpu.filter((s) => stftUsesFft(s.nFft)),
    quick: quick.filter((s) => stftUsesFft(s.nFft)),
    label,
    plan: (device, shape, options) => stftFftPlan(device, shape, options),
    inputs: ({ batch, length, nFft }, seed) => [randomInput(batch * length, seed), hannWindow(nFft), fftTwiddles(nFft)],
  }),
  defineCase<Shape, StftVariant>({
    op: "stft",
    entry: "inverse",
    sources: KERNELS,
    gpu,
    quick,
    label,
    // The frames stft gives for the same signal, returned centred at full length.
    plan: (device, { batch, length, nFft, hopLength }, options) =>
      istftPlan(device, { batch, frames: stftFrames(length, nFft, hopLength), nFft, hopLength }, options),
    inputs: ({ batch, length, nFft, hopLength }, seed) => [
      randomInput(batch * stftFrames(length, nFft, hopLength) * stftBins(nFft) * 2, seed),
      istftBasis(nFft, hopLength),
      hannWindow(nFft),
    ],
  }),
];
