/**
 * The cases matmul's kernels are held to the reference on, and the tolerances they are held to
 * (accuracy.test.ts, epilogue.test.ts, dp4a.test.ts, dp4a_epilogue.test.ts). Deno-only test data.
 *
 * @module
 */

import { randomF32, type ReferenceCase, seededRandom, type Tolerance } from "../../harness/testing.ts";
import { packQ4, packQ8, quantizeQ4G128, unpackQ4, unpackQ8 } from "../matvec/reference.ts";
import { quantizePacked } from "../quantize/mod.ts";
import {
  matmul,
  type MatmulActivation,
  type MatmulArgs,
  type MatmulEpilogueArgs,
  type MatmulLinearArgs,
  type MatmulQ4G128Args,
  type MatmulQ8Args,
  type MatmulShape,
} from "./reference.ts";
import { matmulQ4G128Dp4a, type MatmulQ4G128Dp4aArgs, type MatmulQ8Dp4aArgs } from "./reference_dp4a.ts";

/** The largest of some values, 0 for none. */
export const largest = (xs: Iterable<number>): number => Math.max(0, ...xs);

/** A case, with the bound its tolerance is built from: max over outputs of sum_k |a[m, k]| |w[n, k]|. */
export interface GemmCase<A> extends ReferenceCase<A> {
  /** max over outputs of sum_k |a[m, k]| |w[n, k]|. */
  absDot: number;
}

/** The arguments every product shares. */
export interface GemmArgs {
  a: Float32Array;
  M: number;
  N: number;
  K: number;
}

/**
 * A case of a product whose weight element (n, k) (the operand in a Linear layer's orientation) is
 * `weightAt(n, k)`.
 *
 * @param label what the case is
 * @param args the arguments
 * @param weightAt the weight's values
 * @returns the case with its bound
 */
export function gemmCase<A extends GemmArgs>(
  label: string,
  args: A,
  weightAt: (n: number, k: number) => number,
): GemmCase<A> {
  const { a, M, N, K } = args;
  const absW = new Float32Array(K * N);
  for (let n = 0; n < N; n++) for (let k = 0; k < K; k++) absW[k * N + n] = Math.abs(weightAt(n, k));
  return { label, args, absDot: largest(matmul({ a: a.map(Math.abs), b: absW, M, N, K })) };
}

/** A case of `matmul` (b `[K, N]`). */
export const denseCase = (label: string, args: MatmulArgs): GemmCase<MatmulArgs> =>
  gemmCase(label, args, (n, k) => args.b[k * args.N + n]);

/** A case of `matmulLinear` (weight `[N, K]`). */
export const linearCase = (label: string, args: MatmulLinearArgs): GemmCase<MatmulLinearArgs> =>
  gemmCase(label, args, (n, k) => args.weight[n * args.K + k]);

/** A case of `matmulQ8`. */
export function q8Case(label: string, args: MatmulQ8Args): GemmCase<MatmulQ8Args> {
  const codes = unpackQ8(args.weight, args.N, args.K);
  return gemmCase(label, args, (n, k) => codes[n * args.K + k] * args.scales[n]);
}

/** A case of `matmulQ4G128`. */
export function q4Case(label: string, args: MatmulQ4G128Args): GemmCase<MatmulQ4G128Args> {
  const { N, K } = args;
  const codes = unpackQ4(args.weight, N, K);
  return gemmCase(label, args, (n, k) => codes[n * K + k] * args.scales[n * Math.ceil(K / 128) + Math.floor(k / 128)]);
}

/**
 * The tolerance of an f32 GEMM against the reference (f64 sums rounded once), for a batch of cases:
 * |gpu - ref| <= 2 sqrt(K) 2^-24 max_mn sum_k |a[m, k]| |w[n, k]| + 2^-23 |ref|.
 * An f32 dot product of K terms, summed in any order, is within K 2^-24 sum |a||w| of the exact one;
 * rounding errors of random sign grow like sqrt(K) rather than K, and 2 sqrt(K) >= K up to K = 4, so
 * the bound is the worst case for tiny K and the statistical one beyond it. Measured on llvmpipe, the
 * kernels' error is at most 0.21 of it (K = 3) and 0.007 of it at K = 4099. The relative term covers
 * the last rounding on each side. One bound serves a whole batch, so the batches are grouped by K.
 *
 * @param cases the cases
 * @returns the cases and the one tolerance for all of them
 */
export function batch<A extends { K: number }>(cases: GemmCase<A>[]): { cases: GemmCase<A>[]; tol: Tolerance } {
  const atol = largest(cases.map(({ args, absDot }) => gemmAtol(args.K, absDot)));
  return { cases, tol: { atol, rtol: 2 ** -23 } };
}

/** {@link batch}'s absolute term for one case. */
const gemmAtol = (K: number, absDot: number) => 2 * Math.sqrt(K) * 2 ** -24 * absDot;

/** Arbitrary words: every byte or nibble value (0x80 and 0x8 included) and non-zero padding. */
export function randomWords(length: number, seed: number): Uint32Array {
  const next = seededRandom(seed);
  return Uint32Array.from({ length }, () => Math.floor(next() * 2 ** 32));
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The goldens' operands (goldens/gen.py's and goldens/epilogue.py's pattern()): values in [-1, 1) on a
 * 2^-23 grid (exact in f32), hashed from (seed, index).
 *
 * @param length how many
 * @param seed the seed
 * @returns the values
 */
export function pattern(length: number, seed: number): Float32Array {
  return Float32Array.from({ length }, (_, i) => (fmix32((Math.imul(seed, 0x9e3779b9) + i) >>> 0) >>> 8) / 2 ** 23 - 1);
}

// ---- fused epilogues ------------------------------------------------------------------------------

/** The steps of an epilogue a test asks for (its tensors are made by {@link withEpilogue}). */
export interface EpilogueSteps {
  bias?: boolean;
  activation?: MatmulActivation;
  gateRows?: number;
  accumulate?: boolean;
}

/**
 * Arguments with an epilogue's tensors added: bias in [-1, 1), gate in [-2, 2) (so that gating
 * scales as well as flips signs), the prior c in [-1, 1).
 *
 * @param args the product's arguments
 * @param steps which steps
 * @param seed the tensors' seed
 * @returns the arguments with the epilogue
 */
export function withEpilogue<A extends Pick<MatmulShape, "M" | "N">>(
  args: A,
  steps: EpilogueSteps,
  seed: number,
): A & MatmulEpilogueArgs {
  const { M, N } = args;
  const random = (length: number, s: number, scale = 1) => {
    const next = seededRandom(s);
    return Float32Array.from({ length }, () => scale * (2 * next() - 1));
  };
  return {
    ...args,
    ...(steps.bias ? { bias: random(N, seed) } : {}),
    ...(steps.activation ? { activation: steps.activation } : {}),
    ...(steps.gateRows ? { gateRows: steps.gateRows, gate: random((M / steps.gateRows) * N, seed + 1, 2) } : {}),
    ...(steps.accumulate ? { accumulate: true, c: random(M * N, seed + 2) } : {}),
  };
}

/** The label of an epilogue, e.g. `bias gelu gate 3 accumulate`. */
export function epilogueLabel(steps: EpilogueSteps): string {
  return [
    steps.bias ? "bias" : "",
    steps.activation ?? "",
    steps.gateRows ? `gate ${steps.gateRows}` : "",
    steps.accumulate ? "accumulate" : "",
  ].filter((s) => s).join(" ");
}

/** The epilogue arguments without the steps after the activation (gate, accumulate). */
function beforeGate<A extends MatmulEpilogueArgs>(args: A): A {
  return { ...args, gate: undefined, gateRows: undefined, accumulate: undefined, c: undefined };
}

/**
 * The tolerance of a fused product against the reference (the whole epilogue in f64, rounded once):
 *
 *     atol = G (s (E + 2^-23 Y) + t) + 2^-22 (P + G A),   rtol = 2^-22
 *
 * E is {@link batch}'s bound on the f32 product's error ({@link fusedTolerance} takes another) and
 * Y the largest |y + bias|: the bias is
 * added in f32 (one rounding). s bounds the activation's slope (1.2: GELU's largest is 1.129 at
 * x = 1.5, its tanh form's 1.13, SiLU's 1.0998; 1 without an activation), and t is the activation
 * kernels' own error, 1e-7 + 1e-6 A with A the largest |activation(y + bias)| (ops/activation's kernel
 * tolerance; 0 without one). G is the largest |gate| (1 without), and the gate's product and the
 * accumulation into c (P its largest |prior value|) are one f32 rounding each.
 *
 * @param c the case
 * @param reference the product's reference
 * @returns the case's tolerance
 */
export function epilogueTolerance<A extends GemmArgs & MatmulEpilogueArgs>(
  c: GemmCase<A>,
  reference: (args: A) => Float32Array,
): Tolerance {
  return fusedTolerance(c.args, reference, gemmAtol(c.args.K, c.absDot));
}

/**
 * {@link epilogueTolerance} for a product whose own error, before the epilogue, is at most
 * `productError` at every output (E in its formula): the dp4a products, whose integer sums are exact.
 *
 * @param args the case's arguments, with its epilogue
 * @param reference the product's reference
 * @param productError the bound on |f32 product - exact product| over the outputs
 * @returns the case's tolerance
 */
export function fusedTolerance<A extends MatmulShape & MatmulEpilogueArgs>(
  args: A,
  reference: (args: A) => Float32Array,
  productError: number,
): Tolerance {
  const abs = (xs: Float32Array) => largest(xs.map(Math.abs));
  const preActivation = abs(reference({ ...beforeGate(args), activation: undefined }));
  const activated = abs(reference(beforeGate(args)));
  const gate = args.gate ? abs(args.gate) : 1;
  const prior = args.c ? abs(args.c) : 0;
  const [slope, own] = args.activation ? [1.2, 1e-7 + 1e-6 * activated] : [1, 0];
  const product = slope * (productError + 2 ** -23 * preActivation) + own;
  return { atol: gate * product + 2 ** -22 * (prior + gate * activated), rtol: 2 ** -22 };
}

// ---- the dp4a products ----------------------------------------------------------------------------

/**
 * Activations for the dp4a products: random f32 rows quantised per row (ops/quantize), or (raw)
 * arbitrary words: codes down to -128, and codes in the padding of a row's last word, which the
 * kernels must ignore.
 *
 * @param M rows
 * @param K columns
 * @param seed the seed
 * @param raw arbitrary words instead of quantised rows
 * @returns the codes and the scales
 */
export function dp4aActivations(
  M: number,
  K: number,
  seed: number,
  raw: boolean,
): { a: Uint32Array; aScales: Float32Array } {
  if (raw) return { a: randomWords(M * Math.ceil(K / 4), seed), aScales: randomF32(M, seed + 1, 0.001, 0.1) };
  const { packed, scales } = quantizePacked({ x: randomF32(M * K, seed, -3, 3), rows: M, cols: K });
  return { a: packed, aScales: scales };
}

/**
 * A case of `matmulQ8Dp4a`: quantised activations and a weight of every code (or, raw, arbitrary
 * words for both).
 *
 * @param M rows of a
 * @param N rows of the weight
 * @param K columns
 * @param seed the seed
 * @param raw arbitrary words
 * @returns the case
 */
export function dp4aQ8Case(
  M: number,
  N: number,
  K: number,
  seed: number,
  raw = false,
): ReferenceCase<MatmulQ8Dp4aArgs> {
  const codes = new Int32Array(N * K).map((_, i) => ((i * 37 + seed) % 255) - 127);
  const args: MatmulQ8Dp4aArgs = {
    ...dp4aActivations(M, K, seed, raw),
    weight: raw ? randomWords(N * Math.ceil(K / 4), seed + 4) : packQ8(codes, N, K),
    scales: randomF32(N, seed + 2, 0.001, 0.02),
    M,
    N,
    K,
  };
  return { label: `${raw ? "raw words " : ""}M=${M} N=${N} K=${K}`, args };
}

/**
 * A case of `matmulQ4G128Dp4a`: quantised activations and a quantised random weight (or, raw,
 * arbitrary words for both).
 *
 * @param M rows of a
 * @param N rows of the weight
 * @param K columns
 * @param seed the seed
 * @param raw arbitrary words
 * @returns the case
 */
export function dp4aQ4Case(
  M: number,
  N: number,
  K: number,
  seed: number,
  raw = false,
): ReferenceCase<MatmulQ4G128Dp4aArgs> {
  const q = quantizeQ4G128({ x: randomF32(N * K, seed + 3), rows: N, cols: K });
  const weight = raw ? randomWords(N * Math.ceil(K / 8), seed + 4) : packQ4(q.codes, N, K);
  const args: MatmulQ4G128Dp4aArgs = { ...dp4aActivations(M, K, seed, raw), weight, scales: q.scales, M, N, K };
  return { label: `${raw ? "raw words " : ""}M=${M} N=${N} K=${K}`, args };
}

/**
 * q8 dp4a: the integer sum is exact in both, so the kernel differs from the reference (the exact
 * value rounded once) only by three f32 roundings: the sum converted to f32 and two multiplications,
 * each within 2^-23 relative, so |gpu - ref| <= 2^-21 |ref| (with room; subnormals are not produced
 * here).
 */
export const DP4A_Q8_TOL: Tolerance = { atol: 0, rtol: 2 ** -21 };

/**
 * q4g128 dp4a: the group sums are exact; each group's f32 sum times its scale rounds once, the f32 sum
 * over G groups rounds G - 1 times, and the activation scale once more. So |gpu - ref| <= (G + 2)
 * 2^-23 S, S = aScales[m] sum_g |sum_g(codes) scales[n, g]| (the largest over outputs), plus 2^-23
 * |ref|.
 *
 * @param args the case's arguments (an epilogue among them is ignored: this is the product's bound)
 * @returns the tolerance of the product
 */
export function dp4aQ4Tolerance(args: MatmulQ4G128Dp4aArgs): Tolerance {
  const { M, N, K } = args;
  const groups = Math.ceil(K / 128);
  const abs = { aScales: args.aScales.map(Math.abs), scales: args.scales.map(Math.abs) };
  // An upper bound of S: the product with every code replaced by its magnitude.
  const magnitude = (words: Uint32Array, bits: 8 | 4) =>
    words.map((w) => {
      let out = 0;
      for (let j = 0; j < 32 / bits; j++) {
        const u = (w >>> (bits * j)) & ((1 << bits) - 1);
        out |= Math.abs(u >= 1 << (bits - 1) ? u - (1 << bits) : u) << (bits * j);
      }
      return out >>> 0;
    });
  const s = matmulQ4G128Dp4a({ ...abs, a: magnitude(args.a, 8), weight: magnitude(args.weight, 4), M, N, K });
  return { atol: (groups + 2) * 2 ** -23 * largest(s), rtol: 2 ** -23 };
}
