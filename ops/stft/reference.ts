/**
 * Reference for stft / istft: what correct means, in plain TypeScript (f64 arithmetic, one rounding
 * to f32 at the end).
 *
 * `stft` matches `torch.stft(x, n_fft, hop_length, window=hann_window(n_fft), center=True,
 * pad_mode="reflect", normalized=False, onesided=True, return_complex=True)`:
 * - centred: the signal is padded by `floor(nFft / 2)` at each end by reflection without repeating
 *   the edge sample, so frame f centres on sample f * hopLength; torch refuses the pad when it is not
 *   shorter than the signal, and so does this;
 * - frame count `1 + floor((length + 2 * floor(nFft / 2) - nFft) / hopLength)`, torch's: for even nFft
 *   that is `1 + floor(length / hopLength)`, for odd nFft `1 + floor((length - 1) / hopLength)`;
 * - one-sided (`floor(nFft / 2) + 1` bins), unnormalised, `X[k] = sum_n w[n] x[n] e^{-2 pi i k n / nFft}`;
 * - the window is periodic Hann by default (`torch.hann_window`, not numpy's symmetric `hanning`);
 * - the layout is frame-major, `[batch, frames, bins, 2]` (real, imaginary): a departure from
 *   torch's `[batch, bins, frames]`, so that a frame's spectrum is contiguous (what a vocoder's head
 *   writes and istft reads);
 * - NaN and ±Infinity: the windowed frame is `w[n] x[n]` (so an infinity on a zero of the window is
 *   NaN, as in torch), and each component of a bin sums the frame's terms whose basis value is not
 *   exactly 0: a term at a quarter turn (`cos` at k n / nFft = 1/4 or 3/4, `sin` at 0 or 1/2) is absent
 *   rather than `0 * inf`, as an FFT's butterflies treat it (they swap and negate there, never
 *   multiply). So a non-finite sample gives ±Infinity in the components it reaches (NaN where
 *   infinities of both signs or a NaN meet) and leaves the others finite. That is torch's result
 *   (pocketfft) bin for bin at nFft up to 16 and at the small mixed-radix sizes tested; from nFft 32
 *   up pocketfft's real transform multiplies the infinity by twiddles in both components and gives NaN
 *   in most bins, an artifact of its factorisation that this op does not copy (tested, nonfinite.test.ts).
 *
 * `istft` matches `torch.istft(X, n_fft, hop_length, window, center=True, normalized=False,
 * onesided=True, length)`: each frame is inverted as `torch.fft.irfft` does (scale 1 / nFft; the
 * Nyquist bin of an even nFft counted once; the imaginary parts of the DC and Nyquist bins dropped),
 * multiplied by the window, overlap-added, and divided by the overlap-added squared window (the
 * envelope). Where the envelope over the returned samples falls to torch's threshold (1e-11) or
 * below, the window/hopLength pair cannot be inverted (NOLA fails) and istft throws, as torch does.
 * `padding: "same"` is the Vocos / MioCodec convention instead of centring: `(nFft - hopLength) / 2`
 * samples are cropped from each end, so T frames give T * hopLength samples. By default the output ends
 * where it began, `start` samples before the last frame's end (torch's default length); `length`
 * may shorten it or lengthen it up to the last frame's end, where torch also returns overlap-added
 * samples. Asking for more samples than the frames reach throws: torch zero-fills them, and a
 * sample no frame reaches is not a reconstruction.
 *
 * @module
 */

import { I32_MAX, requireArgs, requireArray, requireInt, requireOneOf, U32_MAX } from "../validate.ts";

/** The keys stft's shape or arguments may carry: sizes and arrays (a plan may be given the arguments). */
const STFT_KEYS: readonly string[] = ["x", "window", "batch", "length", "nFft", "hopLength"];
/** The keys istft's shape or arguments may carry. */
const ISTFT_KEYS: readonly string[] = ["x", "window", "batch", "frames", "nFft", "hopLength", "padding", "length"];

/** torch.istft's NOLA threshold: the envelope must exceed it at every returned sample. */
export const NOLA_THRESHOLD = 1e-11;

/** Sizes and scalars of {@link stft}. */
export interface StftShape {
  /** Signals (>= 1); `x` is `[batch, length]`. */
  batch: number;
  /** Samples per signal (> floor(nFft / 2), as the reflection needs). */
  length: number;
  /** FFT size (>= 2); the window's length. Any size, not only powers of two. */
  nFft: number;
  /** Samples between frames (>= 1), torch's `hop_length`. */
  hopLength: number;
}

/** Arguments of {@link stft}. */
export interface StftArgs extends StftShape {
  /** The signals, `[batch, length]`. */
  x: Float32Array;
  /** The window, length nFft; default the periodic Hann window. */
  window?: Float32Array;
}

/** How istft crops the overlap-added signal. */
export type IstftPadding = "center" | "same";

/** Sizes and scalars of {@link istft}. */
export interface IstftShape {
  /** Spectrograms (>= 1); `x` is `[batch, frames, bins, 2]`. */
  batch: number;
  /** Frames per spectrogram (>= 1). */
  frames: number;
  /** FFT size (>= 2); bins = floor(nFft / 2) + 1. */
  nFft: number;
  /** Samples between frames (>= 1), torch's `hop_length`. */
  hopLength: number;
  /** `"center"` (torch.istft(center=True), the default) or `"same"` (Vocos: T frames give T * hopLength samples). */
  padding?: IstftPadding;
  /** Samples to return per signal, at most {@link istftSpan}'s `reach`; default its `length`. */
  length?: number;
}

/** Arguments of {@link istft}. */
export interface IstftArgs extends IstftShape {
  /** The spectrograms, `[batch, frames, bins, 2]` (real, imaginary). */
  x: Float32Array;
  /** The window, length nFft; default the periodic Hann window. */
  window?: Float32Array;
}

/**
 * One-sided bins of an nFft-point transform: `floor(nFft / 2) + 1`.
 *
 * @param nFft the transform's size
 * @returns the bins
 *
 * @example
 * ```ts
 * import { stftBins } from "@xpu/ops/ops/stft";
 * stftBins(1024); // 513
 * stftBins(1025); // 513
 * ```
 */
export function stftBins(nFft: number): number {
  return Math.floor(nFft / 2) + 1;
}

/**
 * Frames torch.stft(center=True) gives for a signal of `length` samples.
 *
 * @param length samples of the signal
 * @param nFft the transform's size
 * @param hopLength samples between frames
 * @returns the frame count
 *
 * @example
 * ```ts
 * import { stftFrames } from "@xpu/ops/ops/stft";
 * stftFrames(4800, 1024, 256); // 19: 1 + floor((4800 + 2 * 512 - 1024) / 256)
 * ```
 */
export function stftFrames(length: number, nFft: number, hopLength: number): number {
  const padded = length + 2 * Math.floor(nFft / 2);
  return 1 + Math.floor((padded - nFft) / hopLength);
}

/**
 * The periodic Hann window, `0.5 - 0.5 cos(2 pi n / size)`, as torch.hann_window(size).
 *
 * @param size window length
 * @returns the window, rounded to f32
 *
 * @example
 * ```ts
 * import { hannWindow } from "@xpu/ops/ops/stft";
 * hannWindow(4); // [0, 0.5, 1, 0.5]: periodic, as torch.hann_window(4)
 * ```
 */
export function hannWindow(size: number): Float32Array {
  return Float32Array.from({ length: size }, (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / size));
}

/**
 * Validates {@link stft}'s sizes.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateStftShape } from "@xpu/ops/ops/stft";
 * validateStftShape({ batch: 1, length: 4800, nFft: 1024, hopLength: 256 }); // passes
 * ```
 */
export function validateStftShape(shape: StftShape): void {
  requireArgs("stft", "shape", shape, "{ batch, length, nFft, hopLength }", STFT_KEYS);
  checkStftShape("stft", shape);
}

/**
 * Checks stft's sizes for `op` (stft itself, or melSpectrogram, which starts with one).
 *
 * @param op the op, for messages
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { checkStftShape } from "@xpu/ops/ops/stft";
 * checkStftShape("melSpectrogram", { batch: 1, length: 4800, nFft: 1024, hopLength: 256 }); // messages name melSpectrogram
 * ```
 */
export function checkStftShape(op: string, shape: StftShape): void {
  requireInt(op, "batch", shape.batch, 1, U32_MAX);
  requireInt(op, "nFft", shape.nFft, 2, 1 << 16);
  requireInt(op, "hopLength", shape.hopLength, 1, 1 << 24);
  const pad = Math.floor(shape.nFft / 2);
  requireInt(op, "length", shape.length, 1, I32_MAX);
  if (shape.length <= pad) {
    throw new Error(
      `${op}: length must be > floor(nFft / 2) = ${pad} (the reflect pad must be shorter than the signal), got ${shape.length}`,
    );
  }
}

/**
 * Validates {@link stft}'s arguments.
 *
 * @param args the signals, sizes and window
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateStft } from "@xpu/ops/ops/stft";
 * validateStft({ x: new Float32Array(64), batch: 1, length: 64, nFft: 16, hopLength: 4 }); // passes
 * ```
 */
export function validateStft(args: StftArgs): void {
  requireArgs("stft", "args", args, "{ x, window?, batch, length, nFft, hopLength }", STFT_KEYS);
  validateStftShape(args);
  requireArray("stft", "x", args.x, "Float32Array", [args.batch * args.length, "batch * length"]);
  if (args.window !== undefined) requireArray("stft", "window", args.window, "Float32Array", [args.nFft, "nFft"]);
}

/**
 * Where istft's returned samples start in the overlap-added signal (`nFft + hopLength * (frames - 1)`
 * samples from the start of frame 0), how many it returns by default, and how many the frames reach.
 *
 * @param shape the sizes and padding
 * @returns `start` (samples cropped from the front), `length` (the default count: as many cropped
 *   from the end) and `reach` (the most that can be returned: up to the last frame's end)
 *
 * @example
 * ```ts
 * import { istftSpan } from "@xpu/ops/ops/stft";
 * istftSpan({ batch: 1, frames: 17, nFft: 16, hopLength: 4 }); // { start: 8, length: 64, reach: 72 }
 * ```
 */
export function istftSpan(shape: IstftShape): { start: number; length: number; reach: number } {
  const total = shape.nFft + shape.hopLength * (shape.frames - 1);
  const start = (shape.padding ?? "center") === "same"
    ? (shape.nFft - shape.hopLength) / 2
    : Math.floor(shape.nFft / 2);
  return { start, length: total - 2 * start, reach: total - start };
}

/**
 * Validates {@link istft}'s sizes.
 *
 * @param shape the sizes, padding and length
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateIstftShape } from "@xpu/ops/ops/stft";
 * validateIstftShape({ batch: 1, frames: 17, nFft: 16, hopLength: 4, length: 64 }); // passes
 * ```
 */
export function validateIstftShape(shape: IstftShape): void {
  requireArgs("istft", "shape", shape, "{ batch, frames, nFft, hopLength, padding?, length? }", ISTFT_KEYS);
  requireInt("istft", "batch", shape.batch, 1, U32_MAX);
  requireInt("istft", "frames", shape.frames, 1, U32_MAX);
  requireInt("istft", "nFft", shape.nFft, 2, 1 << 16);
  requireInt("istft", "hopLength", shape.hopLength, 1, 1 << 24);
  const padding = requireOneOf("istft", "padding", shape.padding ?? "center", ["center", "same"] as const);
  if (padding === "same" && (shape.hopLength > shape.nFft || (shape.nFft - shape.hopLength) % 2 !== 0)) {
    throw new Error(
      `istft: padding "same" crops (nFft - hopLength) / 2 per end, so nFft - hopLength must be even and >= 0, got nFft ${shape.nFft}, hopLength ${shape.hopLength}`,
    );
  }
  const { length, reach } = istftSpan(shape);
  if (shape.length !== undefined) {
    requireInt("istft", "length", shape.length, 1, U32_MAX);
    if (shape.length > reach) {
      throw new Error(
        `istft: length must be <= ${reach}, the samples ${shape.frames} frames reach, got ${shape.length}`,
      );
    }
  }
  if ((shape.length ?? length) < 1) {
    throw new Error(
      `istft: ${shape.frames} frames of nFft ${shape.nFft}, hopLength ${shape.hopLength} give no samples by default`,
    );
  }
}

/**
 * Validates {@link istft}'s arguments, including torch's NOLA check: the overlap-added squared window
 * must exceed 1e-11 at every returned sample.
 *
 * @param args the spectrograms, sizes and window
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateIstft } from "@xpu/ops/ops/stft";
 * validateIstft({ x: new Float32Array(17 * 9 * 2), batch: 1, frames: 17, nFft: 16, hopLength: 4 }); // passes
 * ```
 */
export function validateIstft(args: IstftArgs): void {
  requireArgs("istft", "args", args, "{ x, window?, batch, frames, nFft, hopLength, padding?, length? }", ISTFT_KEYS);
  validateIstftShape(args);
  const bins = stftBins(args.nFft);
  requireArray("istft", "x", args.x, "Float32Array", [
    args.batch * args.frames * bins * 2,
    "batch * frames * bins * 2",
  ]);
  validateIstftWindow(args, args.window);
}

/**
 * torch.istft's NOLA check for a window: its overlap-added square (the envelope istft divides by)
 * must exceed {@link NOLA_THRESHOLD} at every returned sample, or istft throws as torch does
 * ("window overlap add min"). {@link validateIstft} calls it, and so does `istftPlan` for the window
 * its shape names (the periodic Hann window unless it carries `window`): a plan never reads the
 * window it is later bound to, so a caller that binds another window checks it here.
 *
 * The envelope repeats with period hopLength wherever every frame that could reach a sample exists,
 * so it is evaluated there over one period only, and sample by sample near the ends: the check costs
 * about nFft^2 / hopLength + hopLength steps, whatever the frame count.
 *
 * @param shape the sizes, padding and length
 * @param window the window, length nFft; default the periodic Hann window
 * @throws Error naming the window and hopLength when the envelope falls to the threshold, or the
 *   window when it is not a Float32Array of length nFft
 *
 * @example
 * ```ts
 * import { validateIstftWindow } from "@xpu/ops/ops/stft";
 * validateIstftWindow({ batch: 1, frames: 17, nFft: 16, hopLength: 4 }); // passes: Hann at a quarter of nFft
 * try {
 *   validateIstftWindow({ batch: 1, frames: 17, nFft: 16, hopLength: 16 }); // Hann's zeros meet at frame edges
 * } catch (e) {
 *   (e as Error).message; // "istft: window must satisfy NOLA: its overlap-added square falls to 0 (<= 1e-11) at hopLength 16"
 * }
 * ```
 */
export function validateIstftWindow(shape: IstftShape, window?: Float32Array): void {
  if (window !== undefined) requireArray("istft", "window", window, "Float32Array", [shape.nFft, "nFft"]);
  const w = window ?? hannWindow(shape.nFft);
  const { nFft, hopLength: hop, frames } = shape;
  const { start, length } = istftSpan(shape);
  const end = start + (shape.length ?? length);
  const at = (t: number): number => {
    let e = 0;
    const last = Math.min(frames - 1, Math.floor(t / hop));
    for (let f = Math.max(0, Math.ceil((t - nFft + 1) / hop)); f <= last; f++) e += w[t - f * hop] ** 2;
    return e;
  };
  // Samples in [nFft - 1, (frames - 1) * hopLength] are reached by every frame that could reach them.
  const inner = [Math.max(start, nFft - 1), Math.min(end, (frames - 1) * hop + 1)];
  let lowest = Infinity;
  const visit = (from: number, to: number) => {
    for (let t = from; t < to; t++) lowest = Math.min(lowest, Math.abs(at(t)));
  };
  if (inner[1] > inner[0]) {
    visit(start, inner[0]);
    visit(inner[0], Math.min(inner[1], inner[0] + hop));
    visit(inner[1], end);
  } else visit(start, end);
  if (!(lowest > NOLA_THRESHOLD)) {
    throw new Error(
      `istft: window must satisfy NOLA: its overlap-added square falls to ${lowest} (<= ${NOLA_THRESHOLD}) at hopLength ${hop}`,
    );
  }
}

/**
 * Short-time Fourier transform of each signal of `x`.
 *
 * @param args the signals `[batch, length]`, nFft, hopLength and optional window
 * @returns a new Float32Array `[batch, frames, bins, 2]` (real, imaginary)
 *
 * @example
 * ```ts
 * import { stft } from "@xpu/ops/ops/stft";
 * const x = Float32Array.from({ length: 64 }, (_, n) => Math.cos((2 * Math.PI * 4 * n) / 16));
 * const spec = stft({ x, batch: 1, length: 64, nFft: 16, hopLength: 4 }); // 17 frames of 9 bins; bin 4 peaks
 * ```
 */
export function stft(args: StftArgs): Float32Array {
  validateStft(args);
  const { x, batch, length, nFft, hopLength } = args;
  const window = args.window ?? hannWindow(nFft);
  const frames = stftFrames(length, nFft, hopLength);
  const bins = stftBins(nFft);
  const pad = Math.floor(nFft / 2);
  const out = new Float32Array(batch * frames * bins * 2);
  const frame = new Float64Array(nFft);
  for (let b = 0; b < batch; b++) {
    const signal = x.subarray(b * length, (b + 1) * length);
    for (let f = 0; f < frames; f++) {
      for (let n = 0; n < nFft; n++) {
        // Sample f * hopLength + n of the signal padded by reflection (edge not repeated).
        let s = f * hopLength + n - pad;
        if (s < 0) s = -s;
        if (s >= length) s = 2 * (length - 1) - s;
        frame[n] = window[n] * signal[s];
      }
      for (let k = 0; k < bins; k++) {
        let re = 0, im = 0;
        for (let n = 0; n < nFft; n++) {
          // A term whose basis value is exactly 0 (a quarter turn) is absent, not 0 * frame[n]: a
          // non-finite sample leaves those components as the other samples make them (see below).
          const m = (k * n) % nFft;
          if (4 * m !== nFft && 4 * m !== 3 * nFft) re += frame[n] * Math.cos((2 * Math.PI * m) / nFft);
          if (m !== 0 && 2 * m !== nFft) im -= frame[n] * Math.sin((2 * Math.PI * m) / nFft);
        }
        const at = ((b * frames + f) * bins + k) * 2;
        out[at] = re;
        out[at + 1] = im;
      }
    }
  }
  return out;
}

/**
 * Inverse short-time Fourier transform of each spectrogram of `x`.
 *
 * @param args the spectrograms `[batch, frames, bins, 2]`, nFft, hopLength, padding, length and window
 * @returns a new Float32Array `[batch, length]`
 *
 * @example
 * ```ts
 * import { istft, stft } from "@xpu/ops/ops/stft";
 * const x = Float32Array.from({ length: 64 }, (_, n) => Math.sin(n / 3));
 * const spec = stft({ x, batch: 1, length: 64, nFft: 16, hopLength: 4 });
 * istft({ x: spec, batch: 1, frames: 17, nFft: 16, hopLength: 4, length: 64 }); // x again, to f32 rounding
 * ```
 */
export function istft(args: IstftArgs): Float32Array {
  validateIstft(args);
  const { x, batch, frames, nFft, hopLength } = args;
  const window = args.window ?? hannWindow(nFft);
  const bins = stftBins(nFft);
  const span = istftSpan(args);
  const { start } = span;
  const length = args.length ?? span.length;
  const total = nFft + hopLength * (frames - 1);
  const out = new Float32Array(batch * length);
  for (let b = 0; b < batch; b++) {
    const sum = new Float64Array(total);
    const envelope = new Float64Array(total);
    for (let f = 0; f < frames; f++) {
      const spectrum = x.subarray((b * frames + f) * bins * 2, (b * frames + f + 1) * bins * 2);
      for (let n = 0; n < nFft; n++) {
        // irfft: DC and (even nFft) Nyquist once and real parts only; every other bin twice.
        let v = 0;
        for (let k = 0; k < bins; k++) {
          const edge = k === 0 || 2 * k === nFft;
          const angle = (2 * Math.PI * ((k * n) % nFft)) / nFft;
          const term = spectrum[2 * k] * Math.cos(angle) - (edge ? 0 : spectrum[2 * k + 1] * Math.sin(angle));
          v += edge ? term : 2 * term;
        }
        sum[f * hopLength + n] += (window[n] * v) / nFft;
        envelope[f * hopLength + n] += window[n] * window[n];
      }
    }
    for (let t = 0; t < length; t++) out[b * length + t] = sum[start + t] / envelope[start + t];
  }
  return out;
}
