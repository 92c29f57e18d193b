/**
 * Reference for quantize: what correct means, in plain TypeScript.
 *
 * Per-row absmax quantization to int8, symmetric in [-127, 127]. `x` is `[N, K]` row-major f32;
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
 * Codes are returned as an Int32Array (one int8 value per element), scales as a Float32Array.
 * Non-finite elements of `x` are refused: they have no absmax to scale by.
 *
 * @module
 */

import { requireArray, requireInt } from "../validate.ts";

/** Arguments of {@link quantize}. */
export interface QuantizeArgs {
  /** The values, `[N, K]` row-major; every element finite. */
  x: Float32Array;
  /** Rows. */
  N: number;
  /** Columns. */
  K: number;
}

/** The result of {@link quantize}. */
export interface QuantizeResult {
  /** `[N, K]` codes in [-127, 127]. */
  codes: Int32Array;
  /** `[N]` scales: absmax / 127 per row, 0 for a row of zeros. */
  scales: Float32Array;
}

/**
 * Validates {@link quantize}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 */
export function validateQuantize(args: QuantizeArgs): void {
  const op = "quantize";
  requireInt(op, "N", args.N, 1);
  requireInt(op, "K", args.K, 1);
  requireArray(op, "x", args.x, "Float32Array", [args.N * args.K, "N * K"]);
  for (let i = 0; i < args.x.length; i++) {
    if (!Number.isFinite(args.x[i])) throw new Error(`${op}: x must be finite, but x[${i}] is ${args.x[i]}`);
  }
}

/**
 * Quantizes each row of `x` to int8 codes and one f32 scale, so that `codes * scale`
 * approximates `x`.
 *
 * @param args `x` and its shape `[N, K]`
 * @returns the codes `[N, K]` and the scales `[N]`
 *
 * @example
 * ```ts
 * import { quantize } from "./reference.ts";
 * quantize({ x: new Float32Array([127, 2.5, -2.5, 0.5]), N: 1, K: 4 }); // codes [127, 3, -2, 1], scales [1]
 * ```
 */
export function quantize(args: QuantizeArgs): QuantizeResult {
  validateQuantize(args);
  const { x, N, K } = args;
  const codes = new Int32Array(N * K);
  const scales = new Float32Array(N);
  for (let n = 0; n < N; n++) {
    const row = x.subarray(n * K, (n + 1) * K);
    const absmax = row.reduce((largest, v) => Math.max(largest, Math.abs(v)), 0);
    scales[n] = absmax / 127;
    if (absmax === 0) continue;
    for (let k = 0; k < K; k++) codes[n * K + k] = Math.round((row[k] * 127) / absmax);
  }
  return { codes, scales };
}
