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
 * - nFft need not be a power of two (1920 = 2^7 * 15 and 1025 are tested);
 * - stft on NaN and ±Infinity (nonfinite.test.ts): a quarter-turn term of the transform is absent,
 *   not `0 * inf`, so a non-finite sample gives ±inf in the components it reaches and leaves the
 *   others finite: torch's bins at nFft up to 16; from nFft 32 up pocketfft gives NaN in more bins, an
 *   artifact of its factorisation not copied here (reference.ts). The kernels' butterflies and GEMM do
 *   meet such terms as `0 * inf`, so an output that comes out NaN or infinite is formed again term by
 *   term at the store (a bit test per output; the stages and k-steps unchanged).
 *
 * Refused, with an error naming the argument: a signal not longer than floor(nFft / 2) (torch refuses
 * the reflect pad), asking istft for more samples than the frames reach (past the last frame's end,
 * where torch zero-fills),
 * `padding: "same"` with odd nFft - hopLength, a window whose length is not nFft, and bad sizes or arrays.
 *
 * How it runs. stft has two kernels, and `stftGpu` picks: for nFft a power of two up to 2,048
 * (`stftUsesFft`), entry point `fft`, a radix-2 FFT in workgroup memory, one frame per workgroup
 * (`stftFftPlan`; bindings x, the window and the twiddle factors, `fftTwiddles`); for every other
 * nFft (1920, 1025, 4096, ...), entry point `kernel`, a 64 x 64-tiled GEMM (matmul/tile64's design;
 * `harness/wgsl/gemm64_gathered.wgsl`) of the framed signal `[batch * frames, nFft]`, gathered
 * from x by the kernel with the reflection applied (the frames are never written out), against the
 * windowed basis `[nFft, 2 * bins]` (`stftPlan`). The GEMM handles every size alike, with no
 * per-radix code, at 2 * nFft * 2 * bins FLOPs per frame (4.3 MFLOP at nFft 1024, against about
 * 5 nFft log2 nFft = 0.05 MFLOP for an FFT). istft is the GEMM alone: the spectra times the
 * windowed irfft basis with the overlap-add folded into the GEMM's depth (each output sample is one
 * GEMM element over the ceil(nFft / hopLength) frames that reach it), divided by the envelope as it
 * stores. Bases and twiddles are computed once on the host per nFft (and hopLength, for istft) and
 * cached (`basis.ts`); resident callers upload them once and reuse them with the plans. A plan's
 * `cost.flops` is its own kernel's count (the GEMM's multiply-adds; 5 nFft log2 nFft per frame for the
 * FFT, the conventional count), so a roofline fraction says how well that kernel runs.
 *
 * Measured on the H200 (2026-12-02, Deno 2.9.6 over Vulkan, GPU timestamps, median of 5, warm
 * clocks; compute roofline 64.4 TFLOP/s in the same run), against torch 2.11's cuFFT on the same GPU
 * (0.059 ms forward, 0.33 ms inverse at the first shape), the GEMM kernels:
 *
 * | shape (batch x samples, nFft, hopLength)  | stft     | istft    |
 * | ----------------------------------- | -------- | -------- |
 * | 1 x 720,000 (30 s at 24 kHz), 1024, 256 | 0.274 ms (21.6 TFLOP/s as a GEMM; 4.6x torch) | 0.437 ms (13.5; 1.3x torch) |
 * | 8 x 24,000, 1024, 256               | 0.113 ms | 0.340 ms |
 * | 1 x 1,440,000, 1920, 480            | 0.981 ms | 1.03 ms  |
 *
 * The GEMM runs at its tile's rate (matmul's plain tile64 reaches 21.5 TFLOP/s at 1024^3), so as a
 * GEMM stft could not come within 2x of torch (0.118 ms would need 50 TFLOP/s); that is why the FFT
 * kernel exists for the sizes that allow one. It takes 0.0840 ms at the first shape (1.4x torch; 3.2x
 * faster than the GEMM) and 0.0277 ms at the second (same conditions, a later run:
 * `harness/baselines/nvidia-h200-log/25-stft-fft-group-norm-mel.json`). It moves 14.4 MB in that
 * time, 172 GB/s: its ten barrier-separated stages in workgroup memory bound it, not bandwidth; a
 * radix-4 kernel or two frames per workgroup (one as the real part, one as the imaginary) would be
 * the next steps. istft at 8 x 1 s is poorly occupied (48 workgroups, each walking a depth of 4,160).
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import { type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { overrideEntry } from "../../harness/resolve.ts";
import { fftTwiddles, istftBasis, istftBasisLayout, stftBasis, stftBasisLayout } from "./basis.ts";
import { KERNELS, type StftVariant } from "./kernels.gen.ts";
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
  validateIstftWindow,
  validateStft,
  validateStftShape,
} from "./reference.ts";

export * from "./reference.ts";
export { fftTwiddles, istftBasis, istftBasisLayout, stftBasis, stftBasisLayout };
export { KERNELS, type StftVariant };

/** Rows and columns of the GEMM tile both kernels use. */
const TILE = 64;

const STFT_PARAMS: readonly ParamField[] = [
  { name: "m", type: "u32", of: "batch times the frames" },
  { name: "n", type: "u32" },
  { name: "k", type: "u32" },
  { name: "basis_q", type: "u32" },
  { name: "frames", type: "u32" },
  { name: "length", type: "u32" },
  { name: "hop", type: "u32" },
  { name: "pad", type: "u32" },
];

const FFT_PARAMS: readonly ParamField[] = [
  { name: "rows", type: "u32", of: "batch times the frames" },
  { name: "n_fft", type: "u32" },
  { name: "log2_n", type: "u32" },
  { name: "bins", type: "u32" },
  { name: "frames", type: "u32" },
  { name: "length", type: "u32" },
  { name: "hop", type: "u32" },
  { name: "pad", type: "u32" },
];

const ISTFT_PARAMS: readonly ParamField[] = [
  { name: "m", type: "u32", of: "batch times the output length / hopLength" },
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
  { name: "length", type: "u32", of: "length (default nFft + hopLength * (frames - 1) less the padding)" },
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
export function stftPlan(gpu: ResidentDevice, shape: StftShape, options?: KernelOptions<StftVariant>): KernelPlan {
  requireDevice("stft", gpu);
  checkOptions("stft", options);
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
 * The largest nFft the FFT kernel takes: its two f32 arrays of nFft fill the 16 KiB of workgroup
 * storage every WebGPU device has.
 */
export const STFT_FFT_MAX_SIZE = 2048;

/**
 * Whether {@link stftGpu} runs stft as an FFT (entry point `fft`) at this nFft: a power of two from 2
 * to {@link STFT_FFT_MAX_SIZE}. Other sizes run as the GEMM (`kernel`).
 *
 * @param nFft FFT size
 * @returns true for 2, 4, ..., 2048
 *
 * @example
 * ```ts
 * import { stftUsesFft } from "@xpu/ops/ops/stft";
 * stftUsesFft(1024); // true
 * stftUsesFft(1920); // false: the GEMM runs it
 * ```
 */
export function stftUsesFft(nFft: number): boolean {
  return Number.isInteger(nFft) && nFft >= 2 && nFft <= STFT_FFT_MAX_SIZE && (nFft & (nFft - 1)) === 0;
}

/**
 * Plans `stft` on the GPU as an FFT, one frame per workgroup (see the module doc).
 *
 * @param gpu the device
 * @param shape `batch`, `length`, `nFft` (a power of two up to {@link STFT_FFT_MAX_SIZE}), `hopLength`
 * @param options kernel override
 * @returns the plan; bindings `x` (`[batch, length]`), `window` (length nFft), `twiddles`
 *   ({@link fftTwiddles}) and `out` (`[batch, frames, bins, 2]`)
 * @throws Error naming nFft when it is not a power of two from 2 to 2048, and as {@link stftPlan}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { fftTwiddles, hannWindow, stftFftPlan } from "@xpu/ops/ops/stft";
 * const gpu = await acquireDevice();
 * const plan = stftFftPlan(gpu, { batch: 1, length: 720_000, nFft: 1024, hopLength: 256 });
 * const window = gpu.upload(hannWindow(1024)), twiddles = gpu.upload(fftTwiddles(1024)); // once
 * ```
 */
export function stftFftPlan(gpu: ResidentDevice, shape: StftShape, options?: KernelOptions<StftVariant>): KernelPlan {
  requireDevice("stft", gpu);
  checkOptions("stft", options);
  validateStftShape(shape);
  const { batch, length, nFft, hopLength } = shape;
  if (!stftUsesFft(nFft)) {
    throw new Error(
      `stft: nFft must be a power of two from 2 to ${STFT_FFT_MAX_SIZE} for the FFT kernel, got ${nFft} (stftPlan takes any nFft)`,
    );
  }
  const frames = stftFrames(length, nFft, hopLength);
  const bins = stftBins(nFft);
  const rows = batch * frames;
  const log2 = Math.log2(nFft);
  const params = { rows, n_fft: nFft, log2_n: log2, bins, frames, length, hop: hopLength, pad: nFft / 2 };
  return {
    op: "stft",
    kernel: gpu.resolve(KERNELS, "fft", options),
    bindings: [
      { name: "x", dtype: "f32", length: batch * length, role: "input" },
      { name: "window", dtype: "f32", length: nFft, role: "input" },
      { name: "twiddles", dtype: "f32", length: nFft, role: "input" },
      { name: "out", dtype: "f32", length: rows * bins * 2, role: "output" },
    ],
    params: packParams(FFT_PARAMS, params, "stft"),
    workgroups: foldWorkgroups(rows, gpu.limits.maxComputeWorkgroupsPerDimension),
    // The signal, the window and the twiddles read once, the spectrum written once; the FFT's
    // conventional 5 nFft log2 nFft FLOPs per frame.
    cost: { bytes: 4 * (batch * length + 2 * nFft + rows * bins * 2), flops: 5 * rows * nFft * log2 },
  };
}

/**
 * The plan {@link stftGpu} runs for these arguments and the tables it reads after x: the FFT
 * ({@link stftFftPlan}; the window and the twiddles) where {@link stftUsesFft}, else the GEMM
 * ({@link stftPlan}; the basis). An `override` naming a variant runs that variant's entry point.
 *
 * @param gpu the device
 * @param args the shape and the optional window
 * @param options kernel override
 * @returns the plan and the inputs it binds after x
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { stftKernel } from "@xpu/ops/ops/stft";
 * const gpu = await acquireDevice();
 * const { plan, tables } = stftKernel(gpu, { batch: 1, length: 24_000, nFft: 1024, hopLength: 256 });
 * plan.kernel.variant; // "fft"
 * ```
 */
export function stftKernel(
  gpu: ResidentDevice,
  args: StftShape & { window?: Float32Array },
  options?: KernelOptions<StftVariant>,
): { plan: KernelPlan; tables: Float32Array[] } {
  requireDevice("stft", gpu);
  checkOptions("stft", options);
  const entry = options?.override !== undefined
    ? overrideEntry(options.override)
    : stftUsesFft(args.nFft)
    ? "fft"
    : "kernel";
  if (entry === "fft") {
    const plan = stftFftPlan(gpu, args, options);
    return { plan, tables: [args.window ?? hannWindow(args.nFft), fftTwiddles(args.nFft)] };
  }
  return { plan: stftPlan(gpu, args, options), tables: [stftBasis(args.nFft, args.window)] };
}

/**
 * Short-time Fourier transform on the GPU: the FFT kernel where {@link stftUsesFft}, else the GEMM
 * ({@link stftKernel} chooses).
 *
 * @param gpu the device
 * @param args as {@link stft}
 * @param options kernel override (a variant of `fft` or of `kernel`)
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
export async function stftGpu(
  gpu: ResidentDevice,
  args: StftArgs,
  options?: KernelOptions<StftVariant>,
): Promise<Float32Array> {
  requireDevice("stft", gpu);
  checkOptions("stft", options);
  validateStft(args);
  const { plan, tables } = stftKernel(gpu, args, options);
  const [out] = await gpu.run(plan, [args.x, ...tables]);
  return out as Float32Array;
}

/**
 * Plans `istft` on the GPU.
 *
 * @param gpu the device
 * @param shape `batch`, `frames`, `nFft`, `hopLength`, `padding`, `length`, and the `window` the plan
 *   will be bound to when it is not the periodic Hann window
 * @param options kernel override
 * @returns the plan; bindings `x` (`[batch, frames, bins, 2]`), `basis` ({@link istftBasis}),
 *   `window` (length nFft) and `out` (`[batch, length]`)
 * @throws Error naming the argument, as {@link validateIstftShape}, or naming the window and
 *   hopLength when they fail torch's NOLA check ({@link validateIstftWindow}, for the shape's
 *   `window`, else the Hann window: a window bound later is not read, so check it there)
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { istftPlan } from "@xpu/ops/ops/stft";
 * const gpu = await acquireDevice();
 * const plan = istftPlan(gpu, { batch: 1, frames: 2813, nFft: 1024, hopLength: 256, padding: "same" });
 * ```
 */
export function istftPlan(
  gpu: ResidentDevice,
  shape: IstftShape & { window?: Float32Array },
  options?: KernelOptions<StftVariant>,
): KernelPlan {
  requireDevice("istft", gpu);
  checkOptions("istft", options);
  validateIstftShape(shape);
  validateIstftWindow(shape, shape.window);
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
  options?: KernelOptions<StftVariant>,
): Promise<Float32Array> {
  requireDevice("istft", gpu);
  checkOptions("istft", options);
  validateIstft(args);
  const window = args.window ?? hannWindow(args.nFft);
  const basis = istftBasis(args.nFft, args.hopLength, args.window);
  const [out] = await gpu.run(istftPlan(gpu, args, options), [args.x, basis, window]);
  return out as Float32Array;
}
