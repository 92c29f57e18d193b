/**
 * Reference for quantize: what correct means, in plain TypeScript.
 *
 * Per-row absmax quantization to int8, symmetric in [-127, 127]. `x` is `[rows, cols]` row-major f32;
 * for each row n, with `absmax` the largest |x[n, k]|:
 *
 * - `scales[n] = absmax / 127`, rounded to f32 (as `absmax / 127` on a float32 tensor);
 * - `codes[n, k] = round(x[n, k] * 127 / absmax)` with Math.round's ties: toward +Infinity, so
 *   2.5 -> 3, -2.5 -> -2 and 0.5 -> 1 (not to even, as torch.round, and not away from zero);
 * - a row of zeros gets scale 0 and codes 0, not NaN.
 *
 * The quotient `x * 127 / absmax` is the exact rational, never an f32 one: computed in f64 it
 * cannot cross a rounding boundary (x and absmax are f32, so a quotient that is not a half-integer
 * is at least 2^-33 from one, and the f64 error is below 2^-46), and the GPU decides it exactly
 * in integer arithmetic. An f32 quotient, whether `x * f32(127 / absmax)` or `x / scale`, rounds
 * to 0.5 at x = f32(0.5 / 127), absmax = 1, where the exact quotient is 0.49999999813735485 and
 * the code is 0.
 *
 * Codes are returned as an Int32Array (one int8 value per element), scales as a Float32Array;
 * {@link quantizePacked} gives the same codes in the q8 wire format the quantized matvec and
 * matmul read (ops/matvec's `packQ8`: four per u32, least significant byte first).
 * {@link quantizePackedQ4} is the q4 group-128 format's quantizer (ops/matvec's `quantizeQ4G128`: a
 * scale per 128 columns of a row, codes round(x * 7 / absmax) in [-7, 7], the quotient exact as
 * here) in its wire format (`packQ4`: eight per u32, least significant nibble first).
 * Non-finite elements of `x` are refused, because torch's absmax formula gives nothing an int8
 * format can hold: a row with ±Inf has absmax Inf, so scale Inf, finite codes round(x * 127 / Inf)
 * = 0 and the Inf element's code round(Inf / Inf) = NaN; a row with NaN has absmax NaN (torch.amax
 * propagates it) and every code NaN. Casting NaN to int8 is undefined behaviour in torch (it differs
 * between CPU and CUDA), and dequantizing gives code * scale = 0 * Inf = NaN for every element of
 * the row, so propagation would only hide the bad row. {@link validateQuantize} scans `x` for them;
 * a plan run on resident tensors ({@link validateQuantizeShape} sees only the sizes) cannot.
 *
 * @module
 */

import { packQ4, packQ8, quantizeQ4G128 } from "../matvec/reference.ts";
import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The sizes of a {@link quantize} call: what a plan needs. */
export interface QuantizeShape {
  /** Rows (>= 1), one scale each. */
  rows: number;
  /** Length of each row (>= 1). */
  cols: number;
}

/** Arguments of {@link quantize}. */
export interface QuantizeArgs extends QuantizeShape {
  /** The values, `[rows, cols]` row-major; every element finite. */
  x: Float32Array;
}

/** The result of {@link quantize}. */
export interface QuantizeResult {
  /** `[rows, cols]` codes in [-127, 127]. */
  codes: Int32Array;
  /** `[rows]` scales: absmax / 127 per row, 0 for a row of zeros. */
  scales: Float32Array;
}

/**
 * Validates {@link quantize}'s sizes (what {@link QuantizeShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateQuantizeShape } from "@xpu/ops/ops/quantize";
 * validateQuantizeShape({ rows: 2, cols: 3 }); // passes
 * ```
 */
export function validateQuantizeShape(shape: QuantizeShape): void {
  requireArgs("quantize", "shape", shape, "{ rows, cols }", ["x", "rows", "cols", "rowOffset"]);
  requireInt("quantize", "rows", shape.rows, 1, U32_MAX);
  requireInt("quantize", "cols", shape.cols, 1, U32_MAX);
}

/**
 * Validates {@link quantize}'s arguments: the sizes, then `x`, every element of it finite.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateQuantize } from "@xpu/ops/ops/quantize";
 * validateQuantize({ x: new Float32Array([1, -2]), rows: 1, cols: 2 }); // passes; a NaN in x throws
 * ```
 */
export function validateQuantize(args: QuantizeArgs): void {
  const op = "quantize";
  requireArgs(op, "args", args, "{ x, rows, cols }", ["x", "rows", "cols"]);
  validateQuantizeShape(args);
  requireArray(op, "x", args.x, "Float32Array", [args.rows * args.cols, "rows * cols"]);
  for (let i = 0; i < args.x.length; i++) {
    if (!Number.isFinite(args.x[i])) {
      throw new Error(
        `${op}: x must be finite (an int8 code has no value for Inf or NaN), but x[${i}] is ${args.x[i]}`,
      );
    }
  }
}

/**
 * Quantizes each row of `x` to int8 codes and one f32 scale, so that `codes * scale`
 * approximates `x`.
 *
 * @param args `x` and its shape `[rows, cols]`
 * @returns the codes `[rows, cols]` and the scales `[rows]`
 *
 * @example
 * ```ts
 * import { quantize } from "@xpu/ops";
 * quantize({ x: new Float32Array([127, 2.5, -2.5, 0.5]), rows: 1, cols: 4 }); // codes [127, 3, -2, 1], scales [1]
 * ```
 */
export function quantize(args: QuantizeArgs): QuantizeResult {
  validateQuantize(args);
  const { x, rows, cols } = args;
  const codes = new Int32Array(rows * cols);
  const scales = new Float32Array(rows);
  for (let n = 0; n < rows; n++) {
    const row = x.subarray(n * cols, (n + 1) * cols);
    const absmax = row.reduce((largest, v) => Math.max(largest, Math.abs(v)), 0);
    scales[n] = absmax / 127;
    if (absmax === 0) continue;
    for (let k = 0; k < cols; k++) codes[n * cols + k] = Math.round((row[k] * 127) / absmax);
  }
  return { codes, scales };
}

/** The sizes of a {@link quantizePacked} call on the GPU: what its plan needs. */
export interface QuantizePackedShape extends QuantizeShape {
  /**
   * The destination row the first row is written to (default 0): the plan's `packed` and `scales`
   * hold `rowOffset + rows` rows, so a matrix can be quantized into one buffer a piece at a time.
   */
  rowOffset?: number;
}

/** The result of {@link quantizePacked}. */
export interface QuantizePackedResult {
  /** `[rows, ceil(cols / 4)]` words, as `packQ8` packs the codes. */
  packed: Uint32Array;
  /** `[rows]` scales, as {@link quantize}'s. */
  scales: Float32Array;
}

/**
 * Validates a {@link QuantizePackedShape}: {@link quantize}'s sizes, and a row offset whose last
 * packed word an u32 index reaches.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateQuantizePackedShape } from "@xpu/ops/ops/quantize";
 * validateQuantizePackedShape({ rows: 2, cols: 3, rowOffset: 4 }); // passes
 * ```
 */
export function validateQuantizePackedShape(shape: QuantizePackedShape): void {
  validatePackedShape(shape, 4);
}

/** {@link quantize}'s sizes, and a row offset whose last packed word (`perWord` codes each) an u32 index reaches. */
function validatePackedShape(shape: QuantizePackedShape, perWord: number): void {
  validateQuantizeShape(shape);
  const offset = shape.rowOffset ?? 0;
  requireInt("quantize", "rowOffset", offset, 0, U32_MAX);
  const words = (offset + shape.rows) * Math.ceil(shape.cols / perWord);
  if (words > U32_MAX) {
    throw new Error(`quantize: (rowOffset + rows) * ceil(cols / ${perWord}) must be <= ${U32_MAX}, got ${words}`);
  }
}

/**
 * {@link quantize}, with the codes packed in the q8 wire format (`packQ8`).
 *
 * @param args `x` and its shape `[rows, cols]`
 * @returns the packed codes `[rows, ceil(cols / 4)]` and the scales `[rows]`
 *
 * @example
 * ```ts
 * import { quantizePacked } from "@xpu/ops";
 * quantizePacked({ x: new Float32Array([127, 2.5, -2.5, 0.5, 1]), rows: 1, cols: 5 });
 * // packed [0x01fe037f, 0x00000001]: 127, 3, -2, 1 in one word, then 1 alone; scales [1]
 * ```
 */
export function quantizePacked(args: QuantizeArgs): QuantizePackedResult {
  const { codes, scales } = quantize(args);
  return { packed: packQ8(codes, args.rows, args.cols), scales };
}

/** The result of {@link quantizePackedQ4}. */
export interface QuantizePackedQ4Result {
  /** `[rows, ceil(cols / 8)]` words, as `packQ4` packs the codes. */
  packed: Uint32Array;
  /** `[rows, ceil(cols / 128)]` scales: absmax / 7 per group of 128 columns, 0 for a group of zeros. */
  scales: Float32Array;
}

/**
 * Validates a {@link QuantizePackedShape} for {@link quantizePackedQ4}: {@link quantize}'s sizes, and
 * a row offset whose last packed word an u32 index reaches.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateQuantizePackedQ4Shape } from "@xpu/ops/ops/quantize";
 * validateQuantizePackedQ4Shape({ rows: 2, cols: 300, rowOffset: 4 }); // passes
 * ```
 */
export function validateQuantizePackedQ4Shape(shape: QuantizePackedShape): void {
  validatePackedShape(shape, 8);
}

/**
 * Quantizes each row to the q4 group-128 format, as ops/matvec's `quantizeQ4G128` (per 128 columns
 * of a row, the last group maybe shorter: `scale = f32(absmax / 7)`, `code = round(x * 7 / absmax)`
 * with Math.round's ties, the quotient exact), in the q4 wire format (`packQ4`). `x` is validated as
 * {@link quantize}'s, with its messages.
 *
 * @param args `x` and its shape `[rows, cols]`
 * @returns the packed codes `[rows, ceil(cols / 8)]` and the scales `[rows, ceil(cols / 128)]`
 * @throws Error naming the argument, as {@link validateQuantize}
 *
 * @example
 * ```ts
 * import { quantizePackedQ4 } from "@xpu/ops";
 * quantizePackedQ4({ x: new Float32Array([7, 2.5, -2.5, 0.5, 1, 0, 0, 0, -3.5]), rows: 1, cols: 9 });
 * // packed [0x00011e37, 0x0000000d]: 7, 3, -2, 1, 1, 0, 0, 0, then -3 alone; scales [1]
 * ```
 */
export function quantizePackedQ4(args: QuantizeArgs): QuantizePackedQ4Result {
  validateQuantize(args);
  const { codes, scales } = quantizeQ4G128(args);
  return { packed: packQ4(codes, args.rows, args.cols), scales };
}
