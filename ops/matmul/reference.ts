/**
 * Reference for matrix multiplication: what correct means, in plain TypeScript.
 *
 * - `matmul` is `torch.mm(a, b)`: `a` is `[M, K]`, `b` is `[K, N]`, both f32 row-major, and the
 *   result is `[M, N]`. `b` is read as `[K, N]`, not as a transposed `[N, K]`.
 * - `matmulQ8` is `F.linear(a, dequant(weight))`, i.e. `a @ dequant(weight)^T`: the activations `a`
 *   are `[M, K]` and the weight is a Linear layer's `[N, K]` (one row per output feature), held as
 *   int8 codes packed four to a u32, least-significant byte first, two's complement, `[N, ceil(K/4)]`
 *   words with zero padding at the end of each row, and one f32 scale per row, `scale[N]`:
 *   `out[m, n] = scales[n] * sum_k a[m, k] * code[n, k]`.
 * - `matmulQ4G128` is the same at four bits: eight two's-complement nibbles per u32, least
 *   significant nibble first, `[N, ceil(K/8)]` words, and one scale per group of 128 consecutive
 *   columns of a row, `scales[N, ceil(K/128)]`: `out[m, n] = sum_k a[m, k] * code[n, k] *
 *   scales[n, floor(k / 128)]`.
 * - `matmulF16` is `torch.mm(a.half().float(), b.half().float())`: `a` `[M, K]` and `b` `[K, N]` held
 *   as IEEE binary16, row-major, two halves per u32 word, the lower-indexed element in the low 16
 *   bits, element `e` of a matrix in word `e >> 1` (a row straddles two words when its length is
 *   odd), `ceil(M * K / 2)` and `ceil(K * N / 2)` words; the half in the high bits of an odd-length
 *   matrix's last word is padding and ignored. The sums are `matmul`'s: the halves are decoded to
 *   their exact values and multiplied as such. {@link packF16} writes the format (rounding to nearest,
 *   ties to even, as torch's `.half()`) and {@link unpackF16} reads it.
 *
 * Codes in the padding of a row's last word (columns K and beyond) are ignored. A nibble decodes to
 * [-8, 7] and a byte to [-128, 127] whatever produced them; the quantizers only emit [-7, 7] and
 * [-127, 127], but the decoding is the format's, not the quantizer's.
 *
 * Sums are accumulated in f64 and rounded to f32 once. The decoding here is arithmetic (division,
 * remainder, subtraction), independent of the kernels' bit extraction.
 *
 * Refused, with an error naming the argument: M, N or K that is not an integer >= 1 (an empty
 * dimension is far likelier a shape bug than a request for an empty or all-zero product), and
 * arrays of the wrong type or length.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** Arguments of {@link matmul}. */
export interface MatmulArgs {
  /** Left operand, `[M, K]` row-major. */
  a: Float32Array;
  /** Right operand, `[K, N]` row-major. */
  b: Float32Array;
  /** Rows of `a` and of the result. */
  M: number;
  /** Columns of `b` and of the result. */
  N: number;
  /** Columns of `a`, rows of `b`: the axis summed over. */
  K: number;
}

/** Arguments of {@link matmulQ8}: activations times an int8 weight with one scale per row. */
export interface MatmulQ8Args {
  /** Activations, `[M, K]` row-major f32. */
  a: Float32Array;
  /** The weight `[N, K]` packed by `packQ8`: `[N, ceil(K/4)]` words. */
  weight: Uint32Array;
  /** `[N]`, one scale per weight row. */
  scales: Float32Array;
  /** Rows of `a` and of the result (tokens). */
  M: number;
  /** Rows of the weight, columns of the result (output features). */
  N: number;
  /** Columns of `a` and of the weight (input features). */
  K: number;
}

/** Arguments of {@link matmulQ4G128}: activations times an int4 weight with one scale per 128 columns. */
export interface MatmulQ4G128Args {
  /** Activations, `[M, K]` row-major f32. */
  a: Float32Array;
  /** The weight `[N, K]` packed by `packQ4`: `[N, ceil(K/8)]` words. */
  weight: Uint32Array;
  /** `[N, ceil(K/128)]`, one scale per 128 consecutive columns of a weight row. */
  scales: Float32Array;
  /** Rows of `a` and of the result (tokens). */
  M: number;
  /** Rows of the weight, columns of the result (output features). */
  N: number;
  /** Columns of `a` and of the weight (input features). */
  K: number;
}

/** Arguments of {@link matmulF16}: both operands as packed halves. */
export interface MatmulF16Args {
  /** Left operand `[M, K]` packed by {@link packF16}: `ceil(M * K / 2)` words. */
  a: Uint32Array;
  /** Right operand `[K, N]` packed by {@link packF16}: `ceil(K * N / 2)` words. */
  b: Uint32Array;
  /** Rows of `a` and of the result. */
  M: number;
  /** Columns of `b` and of the result. */
  N: number;
  /** Columns of `a`, rows of `b`: the axis summed over. */
  K: number;
}

/** Columns of a weight row that share one scale in the q4 format. */
const Q4_GROUP = 128;

/** The sizes of a product: `[M, K] x [K, N]` (or a `[N, K]` weight) gives `[M, N]`. */
export interface MatmulShape {
  /** Rows of `a` and of the result (>= 1). */
  M: number;
  /** Columns of the result (>= 1). */
  N: number;
  /** The axis summed over (>= 1). */
  K: number;
}

function requireDims(op: string, shape: MatmulShape): void {
  requireArgs(op, "shape", shape, "{ M, N, K }");
  requireInt(op, "M", shape.M, 1, U32_MAX);
  requireInt(op, "N", shape.N, 1, U32_MAX);
  requireInt(op, "K", shape.K, 1, U32_MAX);
}

/**
 * Validates {@link matmul}'s sizes (what {@link MatmulShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulShape } from "@xpu/ops/ops/matmul";
 * validateMatmulShape({ M: 512, N: 4096, K: 4096 }); // passes; M: 0 throws "matmul: M must be an integer >= 1, got 0"
 * ```
 */
export function validateMatmulShape(shape: MatmulShape): void {
  requireDims("matmul", shape);
}

/**
 * Validates {@link matmulQ8}'s sizes (what {@link MatmulShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulQ8Shape } from "@xpu/ops/ops/matmul";
 * validateMatmulQ8Shape({ M: 512, N: 4096, K: 4096 }); // passes; M: 0 throws "matmulQ8: M must be an integer >= 1, got 0"
 * ```
 */
export function validateMatmulQ8Shape(shape: MatmulShape): void {
  requireDims("matmulQ8", shape);
}

/**
 * Validates {@link matmulQ4G128}'s sizes (what {@link MatmulShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulQ4G128Shape } from "@xpu/ops/ops/matmul";
 * validateMatmulQ4G128Shape({ M: 512, N: 4096, K: 4096 }); // passes; M: 0 throws "matmulQ4G128: M must be an integer >= 1, got 0"
 * ```
 */
export function validateMatmulQ4G128Shape(shape: MatmulShape): void {
  requireDims("matmulQ4G128", shape);
}

/**
 * Validates {@link matmulF16}'s sizes (what {@link MatmulShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulF16Shape } from "@xpu/ops/ops/matmul";
 * validateMatmulF16Shape({ M: 512, N: 4096, K: 4096 }); // passes; M: 0 throws "matmulF16: M must be an integer >= 1, got 0"
 * ```
 */
export function validateMatmulF16Shape(shape: MatmulShape): void {
  requireDims("matmulF16", shape);
}

/**
 * Validates {@link matmul}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 * @example
 * ```ts
 * import { validateMatmul } from "@xpu/ops/ops/matmul";
 * validateMatmul({ a: new Float32Array(6), b: new Float32Array(12), M: 2, N: 4, K: 3 }); // passes
 * ```
 */
export function validateMatmul(args: MatmulArgs): void {
  requireArgs("matmul", "args", args, "{ a, b, M, N, K }");
  requireDims("matmul", args);
  requireArray("matmul", "a", args.a, "Float32Array", [args.M * args.K, "M * K"]);
  requireArray("matmul", "b", args.b, "Float32Array", [args.K * args.N, "K * N"]);
}

/**
 * Validates {@link matmulQ8}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 * @example
 * ```ts
 * import { validateMatmulQ8 } from "@xpu/ops/ops/matmul";
 * validateMatmulQ8({ a: new Float32Array(8), weight: new Uint32Array(3), scales: new Float32Array(3), M: 2, N: 3, K: 4 });
 * ```
 */
export function validateMatmulQ8(args: MatmulQ8Args): void {
  const op = "matmulQ8";
  requireArgs(op, "args", args, "{ a, weight, scales, M, N, K }");
  requireDims(op, args);
  requireArray(op, "a", args.a, "Float32Array", [args.M * args.K, "M * K"]);
  requireArray(op, "weight", args.weight, "Uint32Array", [args.N * Math.ceil(args.K / 4), "N * ceil(K / 4)"]);
  requireArray(op, "scales", args.scales, "Float32Array", [args.N, "N"]);
}

/**
 * Validates {@link matmulQ4G128}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 * @example
 * ```ts
 * import { validateMatmulQ4G128 } from "@xpu/ops/ops/matmul";
 * const weight = new Uint32Array(3); // [N = 3, ceil(K / 8) = 1]
 * validateMatmulQ4G128({ a: new Float32Array(8), weight, scales: new Float32Array(3), M: 2, N: 3, K: 4 });
 * ```
 */
export function validateMatmulQ4G128(args: MatmulQ4G128Args): void {
  const op = "matmulQ4G128";
  requireArgs(op, "args", args, "{ a, weight, scales, M, N, K }");
  requireDims(op, args);
  requireArray(op, "a", args.a, "Float32Array", [args.M * args.K, "M * K"]);
  requireArray(op, "weight", args.weight, "Uint32Array", [args.N * Math.ceil(args.K / 8), "N * ceil(K / 8)"]);
  requireArray(op, "scales", args.scales, "Float32Array", [args.N * Math.ceil(args.K / 128), "N * ceil(K / 128)"]);
}

/**
 * Validates {@link matmulF16}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 * @example
 * ```ts
 * import { validateMatmulF16 } from "@xpu/ops/ops/matmul";
 * validateMatmulF16({ a: new Uint32Array(3), b: new Uint32Array(3), M: 2, N: 2, K: 3 }); // halves, two to a word
 * ```
 */
export function validateMatmulF16(args: MatmulF16Args): void {
  const op = "matmulF16";
  requireArgs(op, "args", args, "{ a, b, M, N, K }");
  requireDims(op, args);
  requireArray(op, "a", args.a, "Uint32Array", [Math.ceil((args.M * args.K) / 2), "ceil(M * K / 2)"]);
  requireArray(op, "b", args.b, "Uint32Array", [Math.ceil((args.K * args.N) / 2), "ceil(K * N / 2)"]);
}

/**
 * The binary16 bits (sign, 5 exponent bits, 10 fraction bits) nearest an f32 value, given as its
 * bits, rounded to nearest, ties to even.
 */
function halfBits(f: number): number {
  const sign = (f >>> 16) & 0x8000;
  const exponent = (f >>> 23) & 0xff; // biased by 127; a half's is biased by 15
  const fraction = f & 0x7fffff;
  if (exponent === 0xff) return sign | (fraction === 0 ? 0x7c00 : 0x7e00);
  // 2^16 and above: past the largest half whatever the rounding.
  if (exponent >= 127 + 16) return sign | 0x7c00;
  // The bits to round (`significand`), of which the low `shift` fall below the half's last bit,
  // and the half's bits before rounding (`kept`).
  let significand: number;
  let shift: number;
  let kept: number;
  if (exponent >= 127 - 14) {
    // A normal half: the top 10 of the 23 fraction bits under the rebiased exponent.
    significand = fraction;
    shift = 13;
    kept = ((exponent - 127 + 15) << 10) | (fraction >>> 13);
  } else {
    // A subnormal half (or zero): the significand, implicit bit included, in units of 2^-24. Below
    // 2^-25 (and for f32 subnormals) everything rounds to zero.
    shift = 126 - exponent;
    if (exponent === 0 || shift > 24) return sign;
    significand = 0x800000 | fraction;
    kept = significand >>> shift;
  }
  const rest = significand & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  // Rounding up carries into the exponent field where the kept bits are all ones: to the next
  // binade, from the largest subnormal to the smallest normal, and from 65504 to infinity.
  if (rest > half || (rest === half && (kept & 1) === 1)) kept++;
  return sign | kept;
}

/** The value of binary16 bits. */
function halfValue(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  return sign * (1024 + fraction) * 2 ** (exponent - 25);
}

/**
 * Packs f32 values as IEEE binary16, two to a u32, the lower-indexed one in the low 16 bits (the
 * format of {@link matmulF16}'s operands, which WGSL's `unpack2x16float` reads). Rounds to nearest,
 * ties to even, as torch's `.half()`: magnitudes of 65520 and above become infinities, NaN stays
 * NaN, values below the smallest normal half (2^-14) become subnormals (multiples of 2^-24), and
 * those at most 2^-25 become zeros of their sign. An odd-length input leaves the high half of the
 * last word zero.
 *
 * @param x the values, row-major
 * @returns `ceil(x.length / 2)` words
 *
 * @example
 * ```ts
 * import { packF16 } from "@xpu/ops";
 * packF16(new Float32Array([1, -2, 0.5])); // [0xc0003c00, 0x3800]
 * ```
 */
export function packF16(x: Float32Array): Uint32Array {
  requireArray("packF16", "x", x, "Float32Array");
  const bits = new Uint32Array(x.buffer, x.byteOffset, x.length);
  const words = new Uint32Array(Math.ceil(x.length / 2));
  for (let e = 0; e < x.length; e++) words[e >> 1] |= halfBits(bits[e]) << (16 * (e & 1));
  return words;
}

/**
 * Reads `length` binary16 values packed by {@link packF16}: every half is exact in f32.
 *
 * @param words the packed values, at least `ceil(length / 2)` words
 * @param length how many values
 * @returns a new Float32Array of `length` values
 *
 * @example
 * ```ts
 * import { unpackF16 } from "@xpu/ops";
 * unpackF16(new Uint32Array([0xc0003c00, 0x3800]), 3); // [1, -2, 0.5]
 * ```
 */
export function unpackF16(words: Uint32Array, length: number): Float32Array {
  requireInt("unpackF16", "length", length);
  requireArray("unpackF16", "words", words, "Uint32Array");
  if (words.length < Math.ceil(length / 2)) {
    throw new Error(
      `unpackF16: words must have length >= ceil(length / 2) = ${Math.ceil(length / 2)}, got ${words.length}`,
    );
  }
  const out = new Float32Array(length);
  for (let e = 0; e < length; e++) out[e] = halfValue((words[e >> 1] >>> (16 * (e & 1))) & 0xffff);
  return out;
}

/** Decodes a packed `[N, K]` weight to its f64 values, `code * scaleOf(n, k)`, row-major. */
function dequantizeRows(
  weight: Uint32Array,
  N: number,
  K: number,
  bits: 8 | 4,
  scaleOf: (n: number, k: number) => number,
): Float64Array {
  const perWord = 32 / bits;
  const wordsPerRow = Math.ceil(K / perWord);
  const levels = 2 ** bits;
  const values = new Float64Array(N * K);
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < K; k++) {
      const word = weight[n * wordsPerRow + Math.floor(k / perWord)];
      const unsigned = Math.floor(word / 2 ** (bits * (k % perWord))) % levels;
      const code = unsigned >= levels / 2 ? unsigned - levels : unsigned;
      values[n * K + k] = code * scaleOf(n, k);
    }
  }
  return values;
}

/** `out[m, n] = sum_k a[m, k] * w[n, k]` in f64, rounded to f32 once. */
function linear(a: Float32Array, w: Float64Array, M: number, N: number, K: number): Float32Array {
  const out = new Float32Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let sum = 0;
      for (let k = 0; k < K; k++) sum += a[m * K + k] * w[n * K + k];
      out[m * N + n] = sum;
    }
  }
  return out;
}

/**
 * `a @ b`, as `torch.mm`.
 *
 * @param args `a` `[M, K]`, `b` `[K, N]` and the shape
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { matmul } from "@xpu/ops";
 * const a = new Float32Array([1, 2, 3, 4]);
 * const b = new Float32Array([5, 6, 7, 8]);
 * matmul({ a, b, M: 2, N: 2, K: 2 }); // [19, 22, 43, 50]
 * ```
 */
export function matmul(args: MatmulArgs): Float32Array {
  validateMatmul(args);
  const { a, b, M, N, K } = args;
  const bTransposed = new Float64Array(N * K);
  for (let k = 0; k < K; k++) {
    for (let n = 0; n < N; n++) bTransposed[n * K + k] = b[k * N + n];
  }
  return linear(a, bTransposed, M, N, K);
}

/**
 * `a @ dequant(weight)^T` with an int8 weight and one scale per weight row, as
 * `F.linear(a, codes * scale[:, None])`.
 *
 * @param args activations `[M, K]`, the packed `[N, K]` weight, `scale[N]` and the shape
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { matmulQ8 } from "@xpu/ops";
 * // codes [1, 2, 3, 4] in one word (least-significant byte first), scale 0.5, a = [1, 1, 1, 1]
 * matmulQ8({ a: new Float32Array([1, 1, 1, 1]), weight: new Uint32Array([0x04030201]), scales: new Float32Array([0.5]), M: 1, N: 1, K: 4 }); // [5]
 * ```
 */
export function matmulQ8(args: MatmulQ8Args): Float32Array {
  validateMatmulQ8(args);
  const w = dequantizeRows(args.weight, args.N, args.K, 8, (n) => args.scales[n]);
  return linear(args.a, w, args.M, args.N, args.K);
}

/**
 * `a @ dequant(weight)^T` with an int4 weight and one scale per group of 128 columns of each
 * weight row, as `F.linear(a, codes * scales.repeat_interleave(128, 1)[:, :K])`.
 *
 * @param args activations `[M, K]`, the packed `[N, K]` weight, `scales[N, ceil(K/128)]` and the shape
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { matmulQ4G128 } from "@xpu/ops";
 * // codes [1, -1] (nibbles 0x1, 0xF, least-significant first), scale 2, a = [3, 1]
 * matmulQ4G128({ a: new Float32Array([3, 1]), weight: new Uint32Array([0xf1]), scales: new Float32Array([2]), M: 1, N: 1, K: 2 }); // [4]
 * ```
 */
export function matmulQ4G128(args: MatmulQ4G128Args): Float32Array {
  validateMatmulQ4G128(args);
  const groups = Math.ceil(args.K / Q4_GROUP);
  const w = dequantizeRows(
    args.weight,
    args.N,
    args.K,
    4,
    (n, k) => args.scales[n * groups + Math.floor(k / Q4_GROUP)],
  );
  return linear(args.a, w, args.M, args.N, args.K);
}

/**
 * `a @ b` with both operands stored as halves: decoded exactly, then {@link matmul}.
 *
 * @param args `a` `[M, K]` and `b` `[K, N]` packed by {@link packF16}, and the shape
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { matmulF16, packF16 } from "@xpu/ops";
 * const a = packF16(new Float32Array([1, 2, 3, 4]));
 * const b = packF16(new Float32Array([5, 6, 7, 8]));
 * matmulF16({ a, b, M: 2, N: 2, K: 2 }); // [19, 22, 43, 50]
 * ```
 */
export function matmulF16(args: MatmulF16Args): Float32Array {
  validateMatmulF16(args);
  const { M, N, K } = args;
  return matmul({ a: unpackF16(args.a, M * K), b: unpackF16(args.b, K * N), M, N, K });
}
