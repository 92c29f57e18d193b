/**
 * Reference for mel: the filterbank, its application, and the mel spectrogram composed from stft;
 * what correct means, in plain TypeScript (f64 arithmetic, one rounding to f32 per result).
 *
 * - `melFilterbank` builds `[nFreqs, nMels]` triangles in torchaudio's layout
 *   (`torchaudio.functional.melscale_fbanks`): by default torchaudio's defaults, the HTK mel scale
 *   (`2595 log10(1 + f / 700)`) and unnormalised triangles of peak 1, with the frequencies of the
 *   bins `linspace(0, floor(sampleRate / 2), nFreqs)`. `{ melScale: "slaney", norm: "slaney" }` gives
 *   librosa.filters.mel's defaults instead (Slaney's scale, linear below 1 kHz and logarithmic
 *   above; each triangle scaled by 2 / its width in Hz, so it has unit area), transposed. On the
 *   same audio the two differ by two orders of magnitude, so neither is left implicit.
 * - `powerSpectrum` is `|X|^2 = re^2 + im^2` of a `[rows, bins, 2]` spectrum (torchaudio's
 *   Spectrogram(power=2), `abs().pow(2)`): with torch's complex `abs`, which is hypot's, a bin with an
 *   infinite part has power +Infinity even when its other part is NaN (re^2 + im^2 would be NaN).
 * - `mel` projects a power spectrum `[rows, nFreqs]` onto the filterbank: `[rows, nMels]`, and with
 *   `db` applies AmplitudeToDB(stype="power", top_db=None): `10 log10(max(v, 1e-10))`. The floor
 *   clamps the argument rather than adding an epsilon, and there is no top_db (it would need the
 *   spectrogram's maximum, a reduction over all of it). NaN stays NaN (torch's clamp keeps it) and
 *   -Infinity clamps to the floor; the projection is a dense product, so a non-finite power meets the
 *   filterbank's zeros as `inf * 0`, NaN, as torch's matmul does.
 * - `melSpectrogram` composes them, frame-major: `[batch, frames, nMels]` in dB, as
 *   `AmplitudeToDB("power")(MelSpectrogram(sample_rate, n_fft, hop_length, n_mels, ...)(x))` transposed
 *   (torchaudio gives `[batch, nMels, frames]`).
 *
 * @module
 */

import { requireArgs, requireArray, requireF32, requireInt, requireOneOf, U32_MAX } from "../validate.ts";
import { checkStftShape, stft, stftBins, stftFrames, type StftShape } from "../stft/reference.ts";

/** The keys of melFilterbank's options besides nFreqs. */
const FILTERBANK_KEYS: readonly string[] = ["nMels", "sampleRate", "fMin", "fMax", "melScale", "norm"];
/** The keys powerSpectrum's shape or arguments may carry: sizes and arrays (a plan may be given the arguments). */
const POWER_KEYS: readonly string[] = ["x", "rows", "bins"];
/** The keys mel's shape or arguments may carry. */
const MEL_KEYS: readonly string[] = ["x", "filterbank", "rows", "nFreqs", "nMels", "db"];
/** The keys melSpectrogram's shape or arguments may carry. */
const SPECTROGRAM_KEYS: readonly string[] = ["x", "batch", "length", "nFft", "hopLength", ...FILTERBANK_KEYS];

/** The mel scale of a filterbank. */
export type MelScale = "htk" | "slaney";

/** The floor AmplitudeToDB clamps power to before the logarithm. */
export const DB_FLOOR = 1e-10;

/** What a filterbank is built from. */
export interface MelFilterbankOptions {
  /** Frequency bins of the spectrum (nFft / 2 + 1), >= 2. */
  nFreqs: number;
  /** Mel bands, >= 1. */
  nMels: number;
  /** Sample rate in Hz, > 0. */
  sampleRate: number;
  /** Lowest frequency, Hz; default 0. */
  fMin?: number;
  /** Highest frequency, Hz; default floor(sampleRate / 2), as torchaudio. */
  fMax?: number;
  /** Mel scale (torchaudio's `mel_scale`); default `"htk"` (torchaudio's default). */
  melScale?: MelScale;
  /** `"slaney"` scales each triangle to unit area; default none (torchaudio's default). */
  norm?: "slaney" | null;
}

/**
 * Mel of a frequency in Hz on the given scale.
 *
 * @param hz the frequency
 * @param scale `htk` or `slaney`
 * @returns its mel
 *
 * @example
 * ```ts
 * import { hzToMel } from "@xpu/ops/ops/mel";
 * hzToMel(1000, "htk"); // 999.99: 2595 log10(1 + 1000 / 700)
 * hzToMel(1000, "slaney"); // 15: linear below 1 kHz
 * ```
 */
export function hzToMel(hz: number, scale: MelScale): number {
  if (scale === "htk") return 2595 * Math.log10(1 + hz / 700);
  const linear = hz / (200 / 3);
  return hz < 1000 ? linear : 15 + Math.log(hz / 1000) / (Math.log(6.4) / 27);
}

/**
 * Frequency in Hz of a mel on the given scale.
 *
 * @param mel the mel
 * @param scale `htk` or `slaney`
 * @returns its frequency
 *
 * @example
 * ```ts
 * import { hzToMel, melToHz } from "@xpu/ops/ops/mel";
 * melToHz(15, "slaney"); // 1000
 * melToHz(hzToMel(440, "htk"), "htk"); // 440, to rounding
 * ```
 */
export function melToHz(mel: number, scale: MelScale): number {
  if (scale === "htk") return 700 * (10 ** (mel / 2595) - 1);
  return mel < 15 ? mel * (200 / 3) : 1000 * Math.exp((Math.log(6.4) / 27) * (mel - 15));
}

/**
 * Validates a filterbank's options.
 *
 * @param options what the filterbank is built from
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMelFilterbank } from "@xpu/ops/ops/mel";
 * validateMelFilterbank({ nFreqs: 513, nMels: 80, sampleRate: 24000 }); // passes
 * try {
 *   validateMelFilterbank({ nFreqs: 513, nMels: 80, sampleRate: 24000, fMax: 13000 });
 * } catch (e) {
 *   (e as Error).message; // fMax above the Nyquist frequency (12,000 Hz) is refused
 * }
 * ```
 */
export function validateMelFilterbank(options: MelFilterbankOptions): void {
  requireArgs("melFilterbank", "options", options, `{ nFreqs, ${FILTERBANK_FIELDS} }`, ["nFreqs", ...FILTERBANK_KEYS]);
  checkMelFilterbank("melFilterbank", options);
}

/** The filterbank options melSpectrogram shares with melFilterbank, for the message of a missing one. */
const FILTERBANK_FIELDS = "nMels, sampleRate, fMin?, fMax?, melScale?, norm?";

/** Checks a filterbank's options for `op` (melFilterbank, or melSpectrogram, which builds one). */
function checkMelFilterbank(op: string, options: MelFilterbankOptions): void {
  requireInt(op, "nFreqs", options.nFreqs, 2, U32_MAX);
  requireInt(op, "nMels", options.nMels, 1, U32_MAX);
  if (!(requireF32(op, "sampleRate", options.sampleRate) > 0)) {
    throw new Error(`${op}: sampleRate must be > 0, got ${options.sampleRate}`);
  }
  const fMin = requireF32(op, "fMin", options.fMin ?? 0);
  const fMax = requireF32(op, "fMax", options.fMax ?? Math.floor(options.sampleRate / 2));
  if (!(fMin >= 0 && fMin < fMax && fMax <= options.sampleRate / 2)) {
    throw new Error(`${op}: 0 <= fMin < fMax <= sampleRate / 2 expected, got fMin ${fMin}, fMax ${fMax}`);
  }
  requireOneOf(op, "melScale", options.melScale ?? "htk", ["htk", "slaney"] as const);
  if (options.norm !== undefined && options.norm !== null) {
    requireOneOf(op, "norm", options.norm, ["slaney"] as const);
  }
}

/**
 * The mel filterbank, `[nFreqs, nMels]`: column m is the triangle rising from mel point m to m + 1
 * and falling to m + 2, the nMels + 2 points equally spaced in mel from fMin to fMax.
 *
 * @param options sizes, sample rate, band edges, scale and norm
 * @returns the filterbank, `[nFreqs, nMels]`
 *
 * @example
 * ```ts
 * import { melFilterbank } from "@xpu/ops/ops/mel";
 * const fb = melFilterbank({ nFreqs: 513, nMels: 80, sampleRate: 24000 }); // torchaudio's HTK default
 * const librosa = melFilterbank({ nFreqs: 513, nMels: 80, sampleRate: 24000, melScale: "slaney", norm: "slaney" });
 * ```
 */
export function melFilterbank(options: MelFilterbankOptions): Float32Array {
  validateMelFilterbank(options);
  const { nFreqs, nMels, sampleRate } = options;
  const scale = options.melScale ?? "htk";
  const fMin = options.fMin ?? 0;
  const fMax = options.fMax ?? Math.floor(sampleRate / 2); // torchaudio: float(sample_rate // 2)
  const top = Math.floor(sampleRate / 2); // torchaudio: linspace(0, sample_rate // 2, n_freqs)
  const freqs = Array.from({ length: nFreqs }, (_, i) => (top * i) / (nFreqs - 1));
  const melMin = hzToMel(fMin, scale), melMax = hzToMel(fMax, scale);
  const points = Array.from(
    { length: nMels + 2 },
    (_, i) => melToHz(melMin + ((melMax - melMin) * i) / (nMels + 1), scale),
  );
  const fb = new Float32Array(nFreqs * nMels);
  for (let m = 0; m < nMels; m++) {
    const [lo, centre, hi] = [points[m], points[m + 1], points[m + 2]];
    const area = options.norm === "slaney" ? 2 / (hi - lo) : 1;
    for (let i = 0; i < nFreqs; i++) {
      const rising = (freqs[i] - lo) / (centre - lo);
      const falling = (hi - freqs[i]) / (hi - centre);
      fb[i * nMels + m] = Math.max(0, Math.min(rising, falling)) * area;
    }
  }
  return fb;
}

/** Arguments of {@link powerSpectrum}. */
export interface PowerSpectrumArgs {
  /** The spectrum, `[rows, bins, 2]` (real, imaginary), e.g. stft's output with rows = batch * frames. */
  x: Float32Array;
  /** Rows (>= 1). */
  rows: number;
  /** Bins per row (>= 1). */
  bins: number;
}

/**
 * Validates {@link powerSpectrum}'s sizes.
 *
 * @param shape rows and bins
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validatePowerSpectrumShape } from "@xpu/ops/ops/mel";
 * validatePowerSpectrumShape({ rows: 19, bins: 513 }); // passes: 19 frames of 513 bins
 * ```
 */
export function validatePowerSpectrumShape(shape: { rows: number; bins: number }): void {
  requireArgs("powerSpectrum", "shape", shape, "{ rows, bins }", POWER_KEYS);
  requireInt("powerSpectrum", "rows", shape.rows, 1, U32_MAX);
  requireInt("powerSpectrum", "bins", shape.bins, 1, U32_MAX);
}

/**
 * Validates {@link powerSpectrum}'s arguments.
 *
 * @param args the spectrum and its sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validatePowerSpectrum } from "@xpu/ops/ops/mel";
 * validatePowerSpectrum({ x: new Float32Array([3, 4, 1, -1]), rows: 1, bins: 2 }); // passes: [rows, bins, 2]
 * ```
 */
export function validatePowerSpectrum(args: PowerSpectrumArgs): void {
  requireArgs("powerSpectrum", "args", args, "{ x, rows, bins }", POWER_KEYS);
  validatePowerSpectrumShape(args);
  requireArray("powerSpectrum", "x", args.x, "Float32Array", [args.rows * args.bins * 2, "rows * bins * 2"]);
}

/**
 * The power spectrum `re^2 + im^2`.
 *
 * @param args the spectrum `[rows, bins, 2]`
 * @returns `[rows, bins]`
 *
 * @example
 * ```ts
 * import { powerSpectrum } from "@xpu/ops/ops/mel";
 * powerSpectrum({ x: new Float32Array([3, 4, 1, -1]), rows: 1, bins: 2 }); // [25, 2]
 * ```
 */
export function powerSpectrum(args: PowerSpectrumArgs): Float32Array {
  validatePowerSpectrum(args);
  const out = new Float32Array(args.rows * args.bins);
  for (let i = 0; i < out.length; i++) {
    const [re, im] = [args.x[2 * i], args.x[2 * i + 1]];
    // |z| is hypot's (torch's complex abs): an infinite part makes it inf, a NaN other part included.
    out[i] = Math.abs(re) === Infinity || Math.abs(im) === Infinity ? Infinity : re ** 2 + im ** 2;
  }
  return out;
}

/** Sizes and scalars of {@link mel}. */
export interface MelShape {
  /** Rows of the power spectrum (frames, times the batch), >= 1. */
  rows: number;
  /** Frequency bins per row, >= 1. */
  nFreqs: number;
  /** Mel bands, >= 1. */
  nMels: number;
  /** Apply AmplitudeToDB(stype="power"): 10 log10(max(v, 1e-10)). Default false. */
  db?: boolean;
}

/** Arguments of {@link mel}. */
export interface MelArgs extends MelShape {
  /** The power spectrum, `[rows, nFreqs]`. */
  x: Float32Array;
  /** The filterbank, `[nFreqs, nMels]` ({@link melFilterbank}). */
  filterbank: Float32Array;
}

/**
 * Validates {@link mel}'s sizes.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMelShape } from "@xpu/ops/ops/mel";
 * validateMelShape({ rows: 19, nFreqs: 513, nMels: 80, db: true }); // passes
 * ```
 */
export function validateMelShape(shape: MelShape): void {
  requireArgs("mel", "shape", shape, "{ rows, nFreqs, nMels, db? }", MEL_KEYS);
  requireInt("mel", "rows", shape.rows, 1, U32_MAX);
  requireInt("mel", "nFreqs", shape.nFreqs, 1, U32_MAX);
  requireInt("mel", "nMels", shape.nMels, 1, U32_MAX);
  if (shape.db !== undefined && typeof shape.db !== "boolean") {
    throw new Error(`mel: db must be a boolean, got ${shape.db}`);
  }
}

/**
 * Validates {@link mel}'s arguments.
 *
 * @param args the power spectrum, the filterbank and their sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMel } from "@xpu/ops/ops/mel";
 * const filterbank = new Float32Array([1, 0, 0.5, 0.5, 0, 1]); // 3 bins, 2 bands
 * validateMel({ x: new Float32Array([10, 20, 30]), filterbank, rows: 1, nFreqs: 3, nMels: 2 }); // passes
 * ```
 */
export function validateMel(args: MelArgs): void {
  requireArgs("mel", "args", args, "{ x, filterbank, rows, nFreqs, nMels, db? }", MEL_KEYS);
  validateMelShape(args);
  requireArray("mel", "x", args.x, "Float32Array", [args.rows * args.nFreqs, "rows * nFreqs"]);
  requireArray("mel", "filterbank", args.filterbank, "Float32Array", [args.nFreqs * args.nMels, "nFreqs * nMels"]);
}

/**
 * Projects a power spectrum onto a mel filterbank, optionally in decibels.
 *
 * @param args the power spectrum `[rows, nFreqs]`, the filterbank `[nFreqs, nMels]` and `db`
 * @returns `[rows, nMels]`
 *
 * @example
 * ```ts
 * import { mel } from "@xpu/ops/ops/mel";
 * const filterbank = new Float32Array([1, 0, 0.5, 0.5, 0, 1]); // 3 bins, 2 bands
 * mel({ x: new Float32Array([10, 20, 30]), filterbank, rows: 1, nFreqs: 3, nMels: 2, db: true }); // [13.0103, 16.0206]
 * ```
 */
export function mel(args: MelArgs): Float32Array {
  validateMel(args);
  const { x, filterbank, rows, nFreqs, nMels } = args;
  const out = new Float32Array(rows * nMels);
  for (let r = 0; r < rows; r++) {
    for (let m = 0; m < nMels; m++) {
      let sum = 0;
      for (let i = 0; i < nFreqs; i++) sum += x[r * nFreqs + i] * filterbank[i * nMels + m];
      out[r * nMels + m] = args.db ? 10 * Math.log10(Math.max(sum, DB_FLOOR)) : sum;
    }
  }
  return out;
}

/** Sizes and options of {@link melSpectrogram}. */
export interface MelSpectrogramShape extends StftShape, Omit<MelFilterbankOptions, "nFreqs"> {}

/** Arguments of {@link melSpectrogram}. */
export interface MelSpectrogramArgs extends MelSpectrogramShape {
  /** The signals, `[batch, length]`. */
  x: Float32Array;
}

/**
 * Validates {@link melSpectrogram}'s sizes and options.
 *
 * @param shape the stft sizes and the filterbank options
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMelSpectrogramShape } from "@xpu/ops/ops/mel";
 * validateMelSpectrogramShape({ batch: 1, length: 4800, nFft: 1024, hopLength: 256, nMels: 64, sampleRate: 24000 });
 * ```
 */
export function validateMelSpectrogramShape(shape: MelSpectrogramShape): void {
  requireArgs(
    "melSpectrogram",
    "shape",
    shape,
    `{ batch, length, nFft, hopLength, ${FILTERBANK_FIELDS} }`,
    SPECTROGRAM_KEYS,
  );
  checkStftShape("melSpectrogram", shape);
  checkMelFilterbank("melSpectrogram", { ...shape, nFreqs: stftBins(shape.nFft) });
}

/**
 * Validates {@link melSpectrogram}'s arguments: the sizes and options, then the signals.
 *
 * @param args the signals, the stft sizes and the filterbank options
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMelSpectrogram } from "@xpu/ops/ops/mel";
 * const x = new Float32Array(4800);
 * validateMelSpectrogram({ x, batch: 1, length: 4800, nFft: 1024, hopLength: 256, nMels: 64, sampleRate: 24000 });
 * ```
 */
export function validateMelSpectrogram(args: MelSpectrogramArgs): void {
  requireArgs(
    "melSpectrogram",
    "args",
    args,
    `{ x, batch, length, nFft, hopLength, ${FILTERBANK_FIELDS} }`,
    SPECTROGRAM_KEYS,
  );
  validateMelSpectrogramShape(args);
  requireArray("melSpectrogram", "x", args.x, "Float32Array", [args.batch * args.length, "batch * length"]);
}

/**
 * The log-mel spectrogram: stft (periodic Hann, centred, reflect) -> power -> mel -> dB.
 *
 * @param args the signals `[batch, length]`, the stft sizes and the filterbank options
 * @returns `[batch, frames, nMels]` in dB
 *
 * @example
 * ```ts
 * import { melSpectrogram } from "@xpu/ops/ops/mel";
 * const x = Float32Array.from({ length: 4800 }, (_, n) => Math.sin(n / 5));
 * melSpectrogram({ x, batch: 1, length: 4800, nFft: 1024, hopLength: 256, nMels: 64, sampleRate: 24000 }); // 19 x 64
 * ```
 */
export function melSpectrogram(args: MelSpectrogramArgs): Float32Array {
  validateMelSpectrogram(args);
  const bins = stftBins(args.nFft);
  const rows = args.batch * stftFrames(args.length, args.nFft, args.hopLength);
  const { x, batch, length, nFft, hopLength, nMels, sampleRate, fMin, fMax, melScale, norm } = args;
  const spectrum = stft({ x, batch, length, nFft, hopLength });
  // |X|^2 from the f32 spectrum; the mel projection in f64.
  const power = powerSpectrum({ x: spectrum, rows, bins });
  const filterbank = melFilterbank({ nFreqs: bins, nMels, sampleRate, fMin, fMax, melScale, norm });
  return mel({ x: power, filterbank, rows, nFreqs: bins, nMels: args.nMels, db: true });
}
