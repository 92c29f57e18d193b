/**
 * Reference for matvec (GEMV): what correct means, in plain TypeScript with f64 accumulation.
 *
 * - `matvec`: `y = W x` with `W` `[N, K]` f32 row-major and `x` `[K]`, as `torch.mv(W, x)`.
 * - `matvecQ8` (W8A32): the weight held as int8 codes packed four to a u32 word (`packQ8`) with one
 *   f32 scale per row: `y[n] = scales[n] * sum_k code[n, k] * x[k]`. The scale multiplies the finished
 *   dot product once; it is not folded into each term.
 * - `matvecQ4G128` (W4A32): codes of four bits packed eight to a word (`packQ4`) with one scale per
 *   128 contiguous columns of a row: `y[n] = sum_g scales[n, g] * sum_{k in group g} code[n, k] * x[k]`.
 * - NaN and ±Infinity give torch's `torch.mv(W, x)` with `W` the weight or `code * scale` (tested
 *   against torch's goldens): NaN in x, a weight row or a scale gives NaN, ±Infinity in x gives ±Infinity
 *   by its weight's sign and NaN against a zero weight. Scaling the finished sum is not torch's
 *   term-by-term sum when a scale or x is infinite: a zero code times an infinite scale, or infinite
 *   terms of both signs, make torch's sum NaN where the scaled sum is ±Infinity. So where the scaled
 *   sum of a row is ±Infinity the row is summed again term by term, `sum_k x[k] * (code[n, k] * scale)`
 *   (in the kernels too, after their reduction); a finite or NaN scaled sum is torch's class already.
 *
 * The wire formats, in full (both little-endian by construction, whatever the host):
 * - q8: `[N, ceil(K/4)]` u32; code `k` of a row is byte `k % 4` (least significant first) of word
 *   `k / 4`, two's complement; codes are `[-127, 127]`, quantize's symmetric range. The padding
 *   bytes of a row's last word are written as zero and never read.
 * - q4: `[N, ceil(K/8)]` u32; code `k` is nibble `k % 8` (least significant first) of word `k / 8`,
 *   two's complement; codes are `[-7, 7]`. Scales are `[N, ceil(K/128)]`, `absmax / 7` of the group
 *   rounded to f32; a group of zeros has scale 0 and codes 0.
 *
 * `quantizeQ4G128`'s conventions, each with a live alternative it is not:
 * - range `[-7, 7]`, not Q4_0's `[-8, 7]`, which clips one tail only and so biases the error;
 * - the quotient `w * 7 / absmax` is rounded exactly, as quantize's `w * 127 / absmax`: `w * 7` is
 *   exact in f64 and the one division is correctly rounded, which cannot cross a rounding boundary
 *   (w and absmax are f32, so a quotient that is not a half-integer is at least 2^-28 from one), so
 *   a GPU can decide each code bit for bit in integer arithmetic (ops/quantize's `packed_q4`). Not
 *   `w * (7 / absmax)` with the reciprocal rounded first: at an exact tie such as w = absmax / 2
 *   (3.5, common in bf16 weights) its rounding error picks the side, e.g. w = -2.5 at absmax 5 gives
 *   -3.5000000000000004 (code -4) where the tie's code is -3. Nor `w * (1 / f32(scale))`: at absmax 1
 *   and w = f32(0.92857146), `w * 7` is 6.50000024 (code 7) where that is 6.49999995 (code 6);
 * - `Math.round`, ties toward +Infinity: 2.5 gives 3 (half-to-even, torch.round, gives 2) and -2.5
 *   gives -2 (half away from zero gives -3).
 *
 * Refused, with an error naming the argument: N or K not an integer >= 1; an array of the wrong type
 * or length; a code outside its range when packing; a non-finite weight when quantizing (torch's
 * absmax formula would make its scale Inf or NaN and its codes NaN, which no int4 code holds). Bytes of a packed weight are not scanned for
 * range when multiplying (a GEMV must not read its weight twice): q8 byte 0x80 and q4 nibble 0x8
 * decode as -128 and -8, which `packQ8` and `packQ4` never write.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["weight", "scales", "x", "N", "K"];

/** Columns per scale in the q4 format. */
export const Q4_GROUP = 128;
/** Largest q4 code magnitude: codes are in [-Q4_MAX, Q4_MAX]. */
export const Q4_MAX = 7;
/** Largest q8 code magnitude: codes are in [-Q8_MAX, Q8_MAX]. */
export const Q8_MAX = 127;

/** Arguments of {@link matvec}. */
export interface MatvecArgs {
  /** `[N, K]` f32, row-major. */
  weight: Float32Array;
  /** `[K]`. */
  x: Float32Array;
  /** Rows of `weight`, length of the result. */
  N: number;
  /** Columns of `weight`, length of `x`. */
  K: number;
}

/** Arguments of {@link matvecQ8}. */
export interface MatvecQ8Args {
  /** `[N, ceil(K/4)]` u32 as written by {@link packQ8}. */
  weight: Uint32Array;
  /** `[N]`, one scale per row. */
  scales: Float32Array;
  /** `[K]`. */
  x: Float32Array;
  /** Rows of the weight, length of the result. */
  N: number;
  /** Columns of the weight, length of `x`. */
  K: number;
}

/** Arguments of {@link matvecQ4G128}. */
export interface MatvecQ4G128Args {
  /** `[N, ceil(K/8)]` u32 as written by {@link packQ4}. */
  weight: Uint32Array;
  /** `[N, ceil(K/128)]`, one scale per 128 columns of a row. */
  scales: Float32Array;
  /** `[K]`. */
  x: Float32Array;
  /** Rows of the weight, length of the result. */
  N: number;
  /** Columns of the weight, length of `x`. */
  K: number;
}

/** The output of {@link quantizeQ4G128}. */
export interface Q4G128 {
  /** `[N, K]` codes in [-7, 7]. */
  codes: Int32Array;
  /** `[N, ceil(K/128)]` scales, absmax / 7 per group. */
  scales: Float32Array;
}

/** The sizes of a {@link matvec}, {@link matvecQ8} or {@link matvecQ4G128} call: the weight is `[N, K]`, x is `[K]`, y is `[N]`. */
export interface MatvecShape {
  /** Rows of the weight, length of y (>= 1). */
  N: number;
  /** Columns of the weight, length of x (>= 1). */
  K: number;
}

function requireShape(op: string, shape: MatvecShape): void {
  requireArgs(op, "shape", shape, "{ N, K }", KEYS);
  requireInt(op, "N", shape.N, 1, U32_MAX);
  requireInt(op, "K", shape.K, 1, U32_MAX);
}

/**
 * Validates {@link matvec}'s sizes (what {@link MatvecShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateMatvecShape } from "@xpu/ops/ops/matvec";
 * validateMatvecShape({ N: 4096, K: 4096 }); // passes; K: 0 throws "matvec: K must be an integer >= 1, got 0"
 * ```
 */
export function validateMatvecShape(shape: MatvecShape): void {
  requireShape("matvec", shape);
}

/**
 * Validates {@link matvecQ8}'s sizes (what {@link MatvecShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateMatvecQ8Shape } from "@xpu/ops/ops/matvec";
 * validateMatvecQ8Shape({ N: 4096, K: 4096 }); // passes
 * ```
 */
export function validateMatvecQ8Shape(shape: MatvecShape): void {
  requireShape("matvecQ8", shape);
}

/**
 * Validates {@link matvecQ4G128}'s sizes (what {@link MatvecShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateMatvecQ4G128Shape } from "@xpu/ops/ops/matvec";
 * validateMatvecQ4G128Shape({ N: 4096, K: 4096 }); // passes
 * ```
 */
export function validateMatvecQ4G128Shape(shape: MatvecShape): void {
  requireShape("matvecQ4G128", shape);
}

/**
 * Validates {@link matvec}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 * @example
 * ```ts
 * import { validateMatvec } from "@xpu/ops/ops/matvec";
 * validateMatvec({ weight: new Float32Array(6), x: new Float32Array(3), N: 2, K: 3 }); // passes
 * ```
 */
export function validateMatvec(args: MatvecArgs): void {
  requireArgs("matvec", "args", args, "{ weight, x, N, K }", ["weight", "x", "N", "K"]);
  requireShape("matvec", args);
  requireArray("matvec", "weight", args.weight, "Float32Array", [args.N * args.K, "N * K"]);
  requireArray("matvec", "x", args.x, "Float32Array", [args.K, "K"]);
}

/**
 * Validates {@link matvecQ8}'s arguments (shapes and types; the codes are not scanned).
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 * @example
 * ```ts
 * import { validateMatvecQ8 } from "@xpu/ops/ops/matvec";
 * validateMatvecQ8({ weight: new Uint32Array(2), scales: new Float32Array(2), x: new Float32Array(3), N: 2, K: 3 });
 * ```
 */
export function validateMatvecQ8(args: MatvecQ8Args): void {
  requireArgs("matvecQ8", "args", args, "{ weight, scales, x, N, K }", KEYS);
  requireShape("matvecQ8", args);
  requireArray("matvecQ8", "weight", args.weight, "Uint32Array", [
    args.N * Math.ceil(args.K / 4),
    "N * ceil(K / 4)",
  ]);
  requireArray("matvecQ8", "scales", args.scales, "Float32Array", [args.N, "N"]);
  requireArray("matvecQ8", "x", args.x, "Float32Array", [args.K, "K"]);
}

/**
 * Validates {@link matvecQ4G128}'s arguments (shapes and types; the codes are not scanned).
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 * @example
 * ```ts
 * import { validateMatvecQ4G128 } from "@xpu/ops/ops/matvec";
 * validateMatvecQ4G128({ weight: new Uint32Array(2), scales: new Float32Array(2), x: new Float32Array(3), N: 2, K: 3 });
 * ```
 */
export function validateMatvecQ4G128(args: MatvecQ4G128Args): void {
  requireArgs("matvecQ4G128", "args", args, "{ weight, scales, x, N, K }", KEYS);
  requireShape("matvecQ4G128", args);
  requireArray("matvecQ4G128", "weight", args.weight, "Uint32Array", [
    args.N * Math.ceil(args.K / 8),
    "N * ceil(K / 8)",
  ]);
  requireArray("matvecQ4G128", "scales", args.scales, "Float32Array", [
    args.N * Math.ceil(args.K / Q4_GROUP),
    "N * ceil(K / 128)",
  ]);
  requireArray("matvecQ4G128", "x", args.x, "Float32Array", [args.K, "K"]);
}

/**
 * `y = W x`, as `torch.mv(W, x)`: each output is the f64 dot product rounded to f32 once.
 *
 * @param args the weight `[N, K]`, the vector `[K]` and the shape
 * @returns `y`, length N
 *
 * @example
 * ```ts
 * import { matvec } from "@xpu/ops";
 * matvec({ weight: new Float32Array([1, 2, 3, 4, 5, 6]), x: new Float32Array([1, 0, -1]), N: 2, K: 3 }); // [-2, -2]
 * ```
 */
export function matvec(args: MatvecArgs): Float32Array {
  validateMatvec(args);
  const { weight, x, N, K } = args;
  const y = new Float32Array(N);
  for (let n = 0; n < N; n++) {
    let sum = 0;
    for (let k = 0; k < K; k++) sum += weight[n * K + k] * x[k];
    y[n] = sum;
  }
  return y;
}

/**
 * Packs int8 codes into the q8 wire format: four per u32, least significant byte first, two's
 * complement, each row's last word padded with zero bytes.
 *
 * @param codes `[N, K]` codes in [-127, 127]
 * @param N rows
 * @param K columns
 * @returns `[N, ceil(K/4)]` words
 * @throws Error naming the argument, or the first code out of range
 *
 * @example
 * ```ts
 * import { packQ8 } from "@xpu/ops";
 * packQ8(new Int32Array([1, -1, 2]), 1, 3); // [0x0002ff01]
 * ```
 */
export function packQ8(codes: Int32Array, N: number, K: number): Uint32Array {
  requireShape("packQ8", { N, K });
  requireArray("packQ8", "codes", codes, "Int32Array", [N * K, "N * K"]);
  return packCodes("packQ8", codes, N, K, 8, Q8_MAX);
}

/**
 * Packs 4-bit codes into the q4 wire format: eight per u32, least significant nibble first, two's
 * complement, each row's last word padded with zero nibbles.
 *
 * @param codes `[N, K]` codes in [-7, 7]
 * @param N rows
 * @param K columns
 * @returns `[N, ceil(K/8)]` words
 * @throws Error naming the argument, or the first code out of range (-8 included: the format is
 *   symmetric)
 *
 * @example
 * ```ts
 * import { packQ4 } from "@xpu/ops";
 * packQ4(new Int32Array([1, -1, 7]), 1, 3); // [0x7f1]
 * ```
 */
export function packQ4(codes: Int32Array, N: number, K: number): Uint32Array {
  requireShape("packQ4", { N, K });
  requireArray("packQ4", "codes", codes, "Int32Array", [N * K, "N * K"]);
  return packCodes("packQ4", codes, N, K, 4, Q4_MAX);
}

function packCodes(op: string, codes: Int32Array, N: number, K: number, bits: number, max: number): Uint32Array {
  const perWord = 32 / bits;
  const wordsPerRow = Math.ceil(K / perWord);
  const mask = 2 ** bits - 1;
  const packed = new Uint32Array(N * wordsPerRow);
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < K; k++) {
      const code = codes[n * K + k];
      if (code < -max || code > max) {
        throw new Error(`${op}: codes[${n * K + k}] = ${code} is outside [${-max}, ${max}]`);
      }
      // The low `bits` bits of an int32 are the code's two's complement at that width.
      packed[n * wordsPerRow + Math.floor(k / perWord)] |= (code & mask) << (bits * (k % perWord));
    }
  }
  return packed;
}

/**
 * Reads the codes back out of a q8 weight (the padding is dropped).
 *
 * @param packed `[N, ceil(K/4)]` words
 * @param N rows
 * @param K columns
 * @returns `[N, K]` codes in [-128, 127]
 * @example
 * ```ts
 * import { packQ8, unpackQ8 } from "@xpu/ops";
 * unpackQ8(packQ8(new Int32Array([1, -2, 127]), 1, 3), 1, 3); // Int32Array [1, -2, 127]
 * ```
 */
export function unpackQ8(packed: Uint32Array, N: number, K: number): Int32Array {
  requireShape("unpackQ8", { N, K });
  requireArray("unpackQ8", "packed", packed, "Uint32Array", [N * Math.ceil(K / 4), "N * ceil(K / 4)"]);
  return unpackCodes(packed, N, K, 8);
}

/**
 * Reads the codes back out of a q4 weight (the padding is dropped).
 *
 * @param packed `[N, ceil(K/8)]` words
 * @param N rows
 * @param K columns
 * @returns `[N, K]` codes in [-8, 7]
 * @example
 * ```ts
 * import { packQ4, unpackQ4 } from "@xpu/ops";
 * unpackQ4(packQ4(new Int32Array([7, -7, 0]), 1, 3), 1, 3); // Int32Array [7, -7, 0]
 * ```
 */
export function unpackQ4(packed: Uint32Array, N: number, K: number): Int32Array {
  requireShape("unpackQ4", { N, K });
  requireArray("unpackQ4", "packed", packed, "Uint32Array", [N * Math.ceil(K / 8), "N * ceil(K / 8)"]);
  return unpackCodes(packed, N, K, 4);
}

function unpackCodes(packed: Uint32Array, N: number, K: number, bits: number): Int32Array {
  const perWord = 32 / bits;
  const wordsPerRow = Math.ceil(K / perWord);
  const mask = 2 ** bits - 1;
  const half = 2 ** (bits - 1);
  const codes = new Int32Array(N * K);
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < K; k++) {
      const word = packed[n * wordsPerRow + Math.floor(k / perWord)];
      const field = (word >>> (bits * (k % perWord))) & mask;
      codes[n * K + k] = field >= half ? field - 2 * half : field;
    }
  }
  return codes;
}

/**
 * `y[n] = scales[n] * sum_k code[n, k] * x[k]`: the dot product in f64, then the row's scale once,
 * then one rounding to f32.
 *
 * @param args the packed weight, the row scales, the vector and the shape
 * @returns `y`, length N
 *
 * @example
 * ```ts
 * import { matvecQ8, packQ8 } from "@xpu/ops";
 * const weight = packQ8(new Int32Array([1, 2, -3, 4]), 2, 2);
 * matvecQ8({ weight, scales: new Float32Array([0.5, 2]), x: new Float32Array([1, 1]), N: 2, K: 2 }); // [1.5, 2]
 * ```
 */
export function matvecQ8(args: MatvecQ8Args): Float32Array {
  validateMatvecQ8(args);
  const { scales, x, N, K } = args;
  const codes = unpackQ8(args.weight, N, K);
  const y = new Float32Array(N);
  for (let n = 0; n < N; n++) {
    let dot = 0;
    for (let k = 0; k < K; k++) dot += codes[n * K + k] * x[k];
    y[n] = scales[n] * dot;
    if (isInfinite(y[n])) y[n] = termByTerm(codes, x, n, K, () => scales[n]);
  }
  return y;
}

/**
 * `y[n] = sum_g scales[n, g] * sum_{k in group g} code[n, k] * x[k]`, in f64, rounded to f32 once.
 *
 * @param args the packed weight, the group scales, the vector and the shape
 * @returns `y`, length N
 *
 * @example
 * ```ts
 * import { matvecQ4G128, packQ4 } from "@xpu/ops";
 * const weight = packQ4(new Int32Array([7, -7, 1]), 1, 3);
 * matvecQ4G128({ weight, scales: new Float32Array([0.5]), x: new Float32Array([1, 1, 2]), N: 1, K: 3 }); // [1]
 * ```
 */
export function matvecQ4G128(args: MatvecQ4G128Args): Float32Array {
  validateMatvecQ4G128(args);
  const { scales, x, N, K } = args;
  const codes = unpackQ4(args.weight, N, K);
  const groups = Math.ceil(K / Q4_GROUP);
  const y = new Float32Array(N);
  for (let n = 0; n < N; n++) {
    let sum = 0;
    for (let g = 0; g < groups; g++) {
      let dot = 0;
      for (let k = g * Q4_GROUP; k < Math.min(K, (g + 1) * Q4_GROUP); k++) dot += codes[n * K + k] * x[k];
      sum += scales[n * groups + g] * dot;
    }
    y[n] = sum;
    if (isInfinite(y[n])) y[n] = termByTerm(codes, x, n, K, (k) => scales[n * groups + Math.floor(k / Q4_GROUP)]);
  }
  return y;
}

/** Whether v is +Infinity or -Infinity. */
function isInfinite(v: number): boolean {
  return v === Infinity || v === -Infinity;
}

/**
 * Row n of a quantized product as torch sums it, `sum_k x[k] * (code[n, k] * scale)`, in f64: where
 * the scaled sum is ±Infinity this is ±Infinity or NaN (a zero code or x times an infinite scale, or
 * infinite terms of both signs), and a finite scaled sum never needs it.
 */
function termByTerm(codes: Int32Array, x: Float32Array, n: number, K: number, scaleAt: (k: number) => number): number {
  let sum = 0;
  for (let k = 0; k < K; k++) sum += x[k] * (codes[n * K + k] * scaleAt(k));
  return sum;
}

/** Arguments of {@link quantizeQ4G128}: the same as quantize's, rows of `x` being the weight's rows. */
export interface QuantizeQ4G128Args {
  /** `[rows, cols]` finite f32 weights, row-major. */
  x: Float32Array;
  /** Rows (>= 1): a weight's output channels, N. */
  rows: number;
  /** Columns (>= 1): a weight's inputs, K; grouped in 128s. */
  cols: number;
}

/**
 * Quantizes an f32 weight to the q4 group-128 format: per row, per 128 contiguous columns (the last
 * group may be shorter), `scale = f32(absmax / 7)` and `code = Math.round((x * 7) / absmax)`, the
 * exact quotient rounded (see the module doc). A group of zeros gets scale 0 and codes 0. A non-finite element is
 * refused, as by quantize: torch's absmax formula would give its group a scale of Inf or NaN and
 * codes of NaN, which no int4 code holds.
 *
 * @param args the weight `x` and its shape `[rows, cols]`
 * @returns codes `[rows, cols]` in [-7, 7] (pack them with {@link packQ4}) and scales `[rows, ceil(cols/128)]`
 * @throws Error naming the argument, or the first non-finite element
 *
 * @example
 * ```ts
 * import { quantizeQ4G128 } from "@xpu/ops";
 * quantizeQ4G128({ x: new Float32Array([7, 2.5, -2.5]), rows: 1, cols: 3 }); // codes [7, 3, -2], scales [1]
 * ```
 */
export function quantizeQ4G128(args: QuantizeQ4G128Args): Q4G128 {
  const op = "quantizeQ4G128";
  requireArgs(op, "args", args, "{ x, rows, cols }", ["x", "rows", "cols"]);
  requireInt(op, "rows", args.rows, 1, U32_MAX);
  requireInt(op, "cols", args.cols, 1, U32_MAX);
  requireArray(op, "x", args.x, "Float32Array", [args.rows * args.cols, "rows * cols"]);
  const { x, rows, cols } = args;
  const groups = Math.ceil(cols / Q4_GROUP);
  const codes = new Int32Array(rows * cols);
  const scales = new Float32Array(rows * groups);
  for (let r = 0; r < rows; r++) {
    for (let g = 0; g < groups; g++) {
      const start = r * cols + g * Q4_GROUP;
      const end = r * cols + Math.min(cols, (g + 1) * Q4_GROUP);
      let absmax = 0;
      for (let i = start; i < end; i++) {
        if (!Number.isFinite(x[i])) {
          throw new Error(`${op}: x must be finite (an int4 code has no value for Inf or NaN), but x[${i}] is ${x[i]}`);
        }
        absmax = Math.max(absmax, Math.abs(x[i]));
      }
      if (absmax === 0) continue;
      scales[r * groups + g] = absmax / Q4_MAX;
      for (let i = start; i < end; i++) codes[i] = Math.round((x[i] * Q4_MAX) / absmax);
    }
  }
  return { codes, scales };
}
