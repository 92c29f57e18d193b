/**
 * stft: the short-time Fourier transform (`stft`, entry point `kernel`) and its inverse (`istft`,
 * entry point `inverse`), with torch.stft / torch.istft's conventions (torch 2.11, measured by the
 * goldens), frame-major. See `reference.ts` for the definitions.
 *
 * Conventions, each pinned by a test that the alternative fails:
 * - centred frames with reflect padding that does not repeat the edge sample (not zeros, not
 *   replicate); torch's frame count, `1 + floor((length + 2 floor(nFft/2) - nFft) / hopLength)`, which for
 *   odd nFft is one fewer than the `1 + floor(length / hopLength)` of even nFft at some lengths;
 * - one-sided, unnormalised forward (no 1/nFft, no 1/sqrt(nFft)), 1/nFft inverse;
 * - periodic Hann by default (numpy's symmetric `hanning` is the alternative);
 * - istft: the Nyquist bin of an even nFft counted once, the imaginary parts of DC and Nyquist
 *   dropped (as irfft); division by the overlap-added squared window; a window/hopLength whose envelope
 *   falls to 1e-11 or below over the returned samples is refused (torch's NOLA check);
 *   `padding: "same"` crops (nFft - hopLength) / 2 per end (Vocos, MioCodec: T frames give T * hopLength
 *   samples), which no torch.istft call gives, since center=False fails NOLA at the ends;
 * - layout `[batch, frames, bins, 2]` for the spectrum, a documented departure from torch's
 *   `[batch, bins, frames]`: a frame's spectrum is contiguous, as a vocoder head writes it;
 * - nFft need not be a power of two (1920 = 2^7 * 15 and 1025 are tested).
 *
 * Refused, with an error naming the argument: a signal not longer than floor(nFft / 2) (torch refuses
 * the reflect pad), asking istft for more samples than the frames reach (past the last frame's end,
 * where torch zero-fills),
 * `padding: "same"` with odd nFft - hopLength, a window whose length is not nFft, and bad sizes or arrays.
 *
 * How it runs, and why a GEMM against a DFT basis rather than an FFT: both directions are one
 * dispatch of a 64 x 64-tiled GEMM (matmul/tile64's design; `harness/wgsl/gemm64_gathered.wgsl`). stft
 * multiplies the framed signal `[batch * frames, nFft]`, gathered from x by the kernel with the
 * reflection applied (the frames are never written out), by the windowed basis `[nFft, 2 * bins]`;
 * istft multiplies the spectra by the windowed irfft basis with the overlap-add folded into the
 * GEMM's depth (each output sample is one GEMM element over the ceil(nFft / hopLength) frames that reach
 * it), and divides by the envelope as it stores. A GEMM handles every nFft alike (1920, 1025, any
 * size) with one tuned kernel and no per-radix code, needs no atomics and no intermediate buffer,
 * and its basis is computed once on the host per nFft (and hopLength, for istft) and cached
 * (`basis.ts`); resident callers upload it once and reuse it with the plans. The price is
 * arithmetic: 2 * nFft * 2 * bins FLOPs per frame (4.3 MFLOP at nFft 1024) against about
 * 5 nFft log2 nFft (0.05 MFLOP) for an FFT, so 30 s of 24 kHz audio (2,813 frames) is a 5.9 GFLOP
 * GEMM each way. The plans' `cost.flops` is the GEMM's count, so the roofline fraction says how well
 * the GEMM runs, not how far it is from an FFT.
 *
 * Measured on the H200 (2026-12-02, Deno 2.9.6 over Vulkan, GPU timestamps, median of 5, warm
 * clocks; compute roofline 64.4 TFLOP/s in the same run), against torch 2.11's cuFFT on the same GPU
 * (0.059 ms forward, 0.33 ms inverse at the first shape):
 *
 * | shape (batch x samples, nFft, hopLength)  | stft     | istft    |
 * | ----------------------------------- | -------- | -------- |
 * | 1 x 720,000 (30 s at 24 kHz), 1024, 256 | 0.274 ms (21.6 TFLOP/s as a GEMM; 4.6x torch) | 0.437 ms (13.5; 1.3x torch) |
 * | 8 x 24,000, 1024, 256               | 0.113 ms | 0.340 ms |
 * | 1 x 1,440,000, 1920, 480            | 0.981 ms | 1.03 ms  |
 *
 * istft is within the 2x-of-torch target; stft is not, and cannot be as a GEMM: its 21.6 TFLOP/s is
 * the rate matmul's plain tile64 reaches at 1024^3 on this GPU (21.5, harness/baselines), so the
 * reflection gather costs nothing measurable and the kernel runs at its tile's rate; 2x of torch
 * (0.118 ms) would need 50 TFLOP/s, above every f32 GEMM measured here (matmul's best is 36.4).
 * Halving the depth for symmetric windows (the cos part needs only x[n] + x[N - n], the sin part
 * x[n] - x[N - n]) would bring it to about 0.14 ms at the same rate, still short; what would meet it
 * is an FFT (radix-2/4 in workgroup memory, a frame per workgroup) for the nFft that allow one.
 * Neither is built. istft at 8 x 1 s is poorly occupied (48 workgroups, each walking a depth of
 * 4,160).
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { istftBasis, istftBasisLayout, stftBasis, stftBasisLayout } from "./basis.ts";
import { KERNELS } from "./kernels.gen.ts";
import {
  hannWindow,
  type IstftArgs,
  type IstftShape,
  istftSpan,
  type StftArgs,
  stftBins,
  stftFrames,
  type StftShape,
  validateIstft,
  validateIstftShape,
  validateStft,
  validateStftShape,
} from "./reference.ts";

export * from "./reference.ts";
export { istftBasis, istftBasisLayout, stftBasis, stftBasisLayout };
export { KERNELS };

/** Rows and columns of the GEMM tile both kernels use. */
const TILE = 64;

const STFT_PARAMS: readonly ParamField[] = [
  { name: "m", type: "u32" },
  { name: "n", type: "u32" },
  { name: "k", type: "u32" },
  { name: "basis_q", type: "u32" },
  { name: "frames", type: "u32" },
  { name: "length", type: "u32" },
  { name: "hop", type: "u32" },
  { name: "pad", type: "u32" },
];

const ISTFT_PARAMS: readonly ParamField[] = [
  { name: "m", type: "u32" },
  { name: "n", type: "u32" },
  { name: "k", type: "u32" },
  { name: "basis_q", type: "u32" },
  { name: "frames", type: "u32" },
  { name: "values", type: "u32" },
  { name: "jp", type: "u32" },
  { name: "blocks", type: "u32" },
  { name: "first_block", type: "u32" },
  { name: "n_fft", type: "u32" },
  { name: "start", type: "u32" },
  { name: "length", type: "u32" },
  { name: "reach", type: "u32" },
];

/**
 * Plans `stft` on the GPU.
 *
 * @param gpu the device
 * @param shape `batch`, `length`, `nFft`, `hopLength`
 * @param options kernel override
 * @returns the plan; bindings `x` (`[batch, length]`), `basis` ({@link stftBasis}) and `out`
 *   (`[batch, frames, bins, 2]`)
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { stftBasis, stftPlan } from "@xpu/ops/ops/stft";
 * const gpu = await acquireDevice();
 * const plan = stftPlan(gpu, { batch: 1, length: 720_000, nFft: 1024, hopLength: 256 });
 * const basis = gpu.upload(stftBasis(1024)); // once; reused by every call at this nFft
 * ```
 */
export function stftPlan(gpu: ResidentDevice, shape: StftShape, options: KernelOptions = {}): KernelPlan {
  validateStftShape(shape);
  const { batch, length, nFft, hopLength } = shape;
  const frames = stftFrames(length, nFft, hopLength);
  const values = 2 * stftBins(nFft);
  const layout = stftBasisLayout(nFft);
  const m = batch * frames;
  const params = {
    m,
    n: values,
    k: nFft,
    basis_q: layout.cols / 4,
    frames,
    length,
    hop: hopLength,
    pad: Math.floor(nFft / 2),
  };
  return {
    op: "stft",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: batch * length, role: "input" },
      { name: "basis", dtype: "f32", length: layout.rows * layout.cols, role: "input" },
      { name: "out", dtype: "f32", length: m * values, role: "output" },
    ],
    params: packParams(STFT_PARAMS, params, "stft"),
    workgroups: foldWorkgroups(
      Math.ceil(m / TILE) * Math.ceil(values / TILE),
      gpu.limits.maxComputeWorkgroupsPerDimension,
    ),
    // The signal and the basis read once, the spectrum written once; the GEMM's multiply-adds (see
    // the module doc: an FFT would need far fewer).
    cost: { bytes: 4 * (batch * length + nFft * values + m * values), flops: 2 * m * nFft * values },
  };
}

/**
 * Short-time Fourier transform on the GPU.
 *
 * @param gpu the device
 * @param args as {@link stft}
 * @param options kernel override
 * @returns the spectrum, `[batch, frames, bins, 2]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { stftGpu } from "@xpu/ops/ops/stft";
 * const gpu = await acquireDevice();
 * const x = Float32Array.from({ length: 24_000 }, (_, n) => Math.sin(n / 10));
 * const spec = await stftGpu(gpu, { x, batch: 1, length: 24_000, nFft: 1024, hopLength: 256 });
 * ```
 */
export async function stftGpu(gpu: ResidentDevice, args: StftArgs, options: KernelOptions = {}): Promise<Float32Array> {
  validateStft(args);
  const [out] = await gpu.run(stftPlan(gpu, args, options), [args.x, stftBasis(args.nFft, args.window)]);
  return out as Float32Array;
}

/**
 * Plans `istft` on the GPU.
 *
 * @param gpu the device
 * @param shape `batch`, `frames`, `nFft`, `hopLength`, `padding`, `length`
 * @param options kernel override
 * @returns the plan; bindings `x` (`[batch, frames, bins, 2]`), `basis` ({@link istftBasis}),
 *   `window` (length nFft) and `out` (`[batch, length]`). The NOLA check needs the window's values,
 *   so it is made by {@link validateIstft} (called by {@link istftGpu}), not here.
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { istftPlan } from "@xpu/ops/ops/stft";
 * const gpu = await acquireDevice();
 * const plan = istftPlan(gpu, { batch: 1, frames: 2813, nFft: 1024, hopLength: 256, padding: "same" });
 * ```
 */
export function istftPlan(gpu: ResidentDevice, shape: IstftShape, options: KernelOptions = {}): KernelPlan {
  validateIstftShape(shape);
  const { batch, frames, nFft, hopLength } = shape;
  const span = istftSpan(shape);
  const { start } = span;
  const length = shape.length ?? span.length;
  const values = 2 * stftBins(nFft);
  const layout = istftBasisLayout(nFft, hopLength);
  const firstBlock = Math.floor(start / hopLength);
  const blocks = Math.floor((start + length - 1) / hopLength) - firstBlock + 1;
  const m = batch * blocks;
  const params = {
    m,
    n: hopLength,
    k: layout.reach * layout.jp,
    basis_q: layout.cols / 4,
    frames,
    values,
    jp: layout.jp,
    blocks,
    first_block: firstBlock,
    n_fft: nFft,
    start,
    length,
    reach: layout.reach,
  };
  return {
    op: "stft",
    kernel: gpu.resolve(KERNELS, "inverse", options),
    bindings: [
      { name: "x", dtype: "f32", length: batch * frames * values, role: "input" },
      { name: "basis", dtype: "f32", length: layout.reach * layout.jp * layout.cols, role: "input" },
      { name: "window", dtype: "f32", length: nFft, role: "input" },
      { name: "out", dtype: "f32", length: batch * length, role: "output" },
    ],
    params: packParams(ISTFT_PARAMS, params, "istft"),
    workgroups: foldWorkgroups(
      Math.ceil(m / TILE) * Math.ceil(hopLength / TILE),
      gpu.limits.maxComputeWorkgroupsPerDimension,
    ),
    // The spectra, the basis and the window read once, the signal written once; the inverse DFT's
    // multiply-adds as a GEMM (2 * nFft * 2 * bins per frame; see the module doc).
    cost: {
      bytes: 4 * (batch * frames * values + nFft * values + nFft + batch * length),
      flops: 2 * batch * frames * nFft * values,
    },
  };
}

/**
 * Inverse short-time Fourier transform on the GPU.
 *
 * @param gpu the device
 * @param args as {@link istft}
 * @param options kernel override
 * @returns the signals, `[batch, length]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { istftGpu, stftGpu } from "@xpu/ops/ops/stft";
 * const gpu = await acquireDevice();
 * const x = Float32Array.from({ length: 24_000 }, (_, n) => Math.sin(n / 10));
 * const spec = await stftGpu(gpu, { x, batch: 1, length: 24_000, nFft: 1024, hopLength: 256 });
 * const y = await istftGpu(gpu, { x: spec, batch: 1, frames: 94, nFft: 1024, hopLength: 256, length: 24_000 });
 * ```
 */
export async function istftGpu(
  gpu: ResidentDevice,
  args: IstftArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateIstft(args);
  const window = args.window ?? hannWindow(args.nFft);
  const basis = istftBasis(args.nFft, args.hopLength, args.window);
  const [out] = await gpu.run(istftPlan(gpu, args, options), [args.x, basis, window]);
  return out as Float32Array;
}
