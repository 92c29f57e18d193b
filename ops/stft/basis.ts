/**
 * The DFT bases stft's GEMM kernels multiply by, built on the host in f64 and rounded to f32 once,
 * padded to whole tiles of the kernels (so their loads need no guard) and cached per nFft (stft) or
 * per (nFft, hopLength) (istft) for the default window. A caller's own window gets a basis built for it
 * on each call. Also the FFT kernel's twiddle factors, built the same way.
 *
 * @module
 */

import { hannWindow, stftBins } from "./reference.ts";

/** Rounds n up to a multiple of m. */
const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;

/**
 * The layout of stft's basis: `[rows, cols]`, the forward basis `[nFft, 2 * bins]` padded.
 *
 * @param nFft the transform's size
 * @returns rows (nFft, padded to a multiple of 16) and columns (2 * bins, padded to a multiple of 64)
 *
 * @example
 * ```ts
 * import { stftBasisLayout } from "@xpu/ops/ops/stft";
 * stftBasisLayout(1920); // { rows: 1920, cols: 1984 }: 2 * 961 = 1922 padded to 1984
 * ```
 */
export function stftBasisLayout(nFft: number): { rows: number; cols: number } {
  return { rows: roundUp(nFft, 16), cols: roundUp(2 * stftBins(nFft), 64) };
}

/**
 * The layout of istft's basis: `reach = ceil(nFft / hopLength)` blocks of `jp` rows (the 2 * bins values
 * of a frame, padded to a multiple of 16), `cols` columns (hopLength, padded to a multiple of 64).
 *
 * @param nFft the transform's size
 * @param hopLength samples between frames
 * @returns reach, jp and cols
 *
 * @example
 * ```ts
 * import { istftBasisLayout } from "@xpu/ops/ops/stft";
 * istftBasisLayout(1024, 256); // { reach: 4, jp: 1040, cols: 256 }: four frames overlap each output block
 * ```
 */
export function istftBasisLayout(nFft: number, hopLength: number): { reach: number; jp: number; cols: number } {
  return { reach: Math.ceil(nFft / hopLength), jp: roundUp(2 * stftBins(nFft), 16), cols: roundUp(hopLength, 64) };
}

/**
 * cos and sin of 2 pi m / nFft for m = 0 .. nFft - 1 (the angle reduced exactly, as an integer), exactly
 * 0 and ±1 at the quarter turns (`Math.cos(pi / 2)` is 6e-17): the kernels find the terms the
 * reference leaves out there (a non-finite sample times an exact 0) and form those outputs again.
 */
function unitCircle(nFft: number): { cos: Float64Array; sin: Float64Array } {
  const cos = new Float64Array(nFft), sin = new Float64Array(nFft);
  for (let m = 0; m < nFft; m++) {
    const quarter = (4 * m) % nFft === 0 ? (4 * m) / nFft : -1;
    cos[m] = quarter < 0 ? Math.cos((2 * Math.PI * m) / nFft) : [1, 0, -1, 0][quarter];
    sin[m] = quarter < 0 ? Math.sin((2 * Math.PI * m) / nFft) : [0, 1, 0, -1][quarter];
  }
  return { cos, sin };
}

const forwardCache = new Map<number, Float32Array>();
const twiddleCache = new Map<number, Float32Array>();

/**
 * The FFT kernel's twiddle factors: `(cos(2 pi m / nFft), -sin(2 pi m / nFft))` for m = 0 .. nFft / 2 - 1,
 * interleaved, computed in f64 and rounded once; cached per nFft.
 *
 * @param nFft FFT size (even)
 * @returns `[nFft / 2, 2]`
 *
 * @example
 * ```ts
 * import { fftTwiddles } from "@xpu/ops/ops/stft";
 * fftTwiddles(8); // [1, 0, cos(pi/4), -sin(pi/4), 0, -1, -cos(pi/4), -sin(pi/4)]: e^(-2 pi i k / 8), k < 4
 * ```
 */
export function fftTwiddles(nFft: number): Float32Array {
  const cached = twiddleCache.get(nFft);
  if (cached) return cached;
  const { cos, sin } = unitCircle(nFft);
  const out = new Float32Array(nFft);
  for (let m = 0; m < nFft / 2; m++) {
    out[2 * m] = cos[m];
    out[2 * m + 1] = -sin[m];
  }
  twiddleCache.set(nFft, out);
  return out;
}
const inverseCache = new Map<string, Float32Array>();

/**
 * stft's basis: row n, column 2k is `w[n] cos(2 pi k n / nFft)`, column 2k + 1 is
 * `-w[n] sin(2 pi k n / nFft)`; zero past nFft rows and 2 * bins columns.
 *
 * @param nFft FFT size
 * @param window the window (default periodic Hann, whose basis is cached)
 * @returns the padded basis, {@link stftBasisLayout}
 *
 * @example
 * ```ts
 * import { stftBasis, stftBasisLayout } from "@xpu/ops/ops/stft";
 * const { rows, cols } = stftBasisLayout(16);
 * stftBasis(16).length === rows * cols; // true: the forward basis stftPlan binds, padded
 * ```
 */
export function stftBasis(nFft: number, window?: Float32Array): Float32Array {
  const cached = window === undefined ? forwardCache.get(nFft) : undefined;
  if (cached) return cached;
  const w = window ?? hannWindow(nFft);
  const { rows, cols } = stftBasisLayout(nFft);
  const { cos, sin } = unitCircle(nFft);
  const basis = new Float32Array(rows * cols);
  for (let n = 0; n < nFft; n++) {
    for (let k = 0; k < stftBins(nFft); k++) {
      const m = (k * n) % nFft;
      basis[n * cols + 2 * k] = w[n] * cos[m];
      basis[n * cols + 2 * k + 1] = -w[n] * sin[m];
    }
  }
  if (window === undefined) forwardCache.set(nFft, basis);
  return basis;
}

/**
 * istft's basis: row `d * jp + j`, column r holds the windowed irfft coefficient of frame value j
 * at frame sample n = r + d * hopLength: `w[n] c_k cos(2 pi k n / nFft) / nFft` for j = 2k (real part),
 * `-w[n] c_k sin(2 pi k n / nFft) / nFft` for j = 2k + 1, with c_k = 1 for DC and (even nFft)
 * Nyquist and 2 otherwise, and zero for the imaginary parts of DC and Nyquist, for n >= nFft, and in
 * the padding.
 *
 * @param nFft FFT size
 * @param hopLength samples between frames
 * @param window the window (default periodic Hann, whose basis is cached)
 * @returns the padded basis, {@link istftBasisLayout}
 *
 * @example
 * ```ts
 * import { istftBasis, istftBasisLayout } from "@xpu/ops/ops/stft";
 * const basis = istftBasis(16, 4); // the padded inverse basis istftPlan binds
 * basis.length; // istftBasisLayout(16, 4): reach * jp * cols
 * ```
 */
export function istftBasis(nFft: number, hopLength: number, window?: Float32Array): Float32Array {
  const key = `${nFft}:${hopLength}`;
  const cached = window === undefined ? inverseCache.get(key) : undefined;
  if (cached) return cached;
  const w = window ?? hannWindow(nFft);
  const { reach, jp, cols } = istftBasisLayout(nFft, hopLength);
  const { cos, sin } = unitCircle(nFft);
  const basis = new Float32Array(reach * jp * cols);
  for (let d = 0; d < reach; d++) {
    for (let r = 0; r < hopLength; r++) {
      const n = r + d * hopLength;
      if (n >= nFft) break;
      for (let k = 0; k < stftBins(nFft); k++) {
        const edge = k === 0 || 2 * k === nFft;
        const scale = (w[n] * (edge ? 1 : 2)) / nFft;
        const m = (k * n) % nFft;
        basis[(d * jp + 2 * k) * cols + r] = scale * cos[m];
        basis[(d * jp + 2 * k + 1) * cols + r] = edge ? 0 : -scale * sin[m];
      }
    }
  }
  if (window === undefined) inverseCache.set(key, basis);
  return basis;
}
