/**
 * Reference for layer normalisation of the last axis: what correct means, in plain TypeScript.
 *
 * `layernorm({ x, N, D, weight, bias, eps })` gives, for each row of `x` `[N, D]`,
 * `out[n, d] = (x[n, d] - mean) / sqrt(var + eps) * weight[d] + bias[d]`, which is
 * `torch.nn.functional.layer_norm(x, (D,), weight, bias, eps)`:
 *
 * - The variance is the biased one, the mean of squared deviations (divided by D, not D - 1).
 * - eps is added to the variance inside the square root, not to the standard deviation.
 * - eps defaults to 1e-5 (torch's default) and must be finite and >= 0; with eps > 0 a constant row
 *   gives zeros (then the bias), with eps = 0 it gives NaN (0 / 0), as torch does.
 * - weight and bias are `[D]`, each optional: absent means ones and zeros.
 *
 * Mean and variance are computed in two passes in f64 (so a row like 1000 + noise loses nothing to
 * cancellation), and the result is rounded to f32 once.
 *
 * @module
 */

import { requireArray, requireInt, requireNumber } from "../validate.ts";

/** The eps used when none is given (torch's default). */
export const LAYERNORM_DEFAULT_EPS = 1e-5;

/** Arguments of {@link layernorm}. */
export interface LayernormArgs {
  /** Input, `[N, D]` row-major. */
  x: Float32Array;
  /** Number of rows (>= 1). */
  N: number;
  /** Length of each row, the axis normalised over (>= 1). */
  D: number;
  /** Optional scale, `[D]`. Absent means ones. */
  weight?: Float32Array;
  /** Optional shift, `[D]`. Absent means zeros. */
  bias?: Float32Array;
  /** Added to the variance inside the square root; finite and >= 0. Default 1e-5. */
  eps?: number;
}

/**
 * Validates {@link layernorm}'s arguments.
 *
 * @param args the arguments
 * @returns the eps to use
 * @throws Error naming the bad argument and what was expected
 */
export function validateLayernorm(args: LayernormArgs): number {
  requireInt("layernorm", "N", args.N, 1);
  requireInt("layernorm", "D", args.D, 1);
  requireArray("layernorm", "x", args.x, "Float32Array", [args.N * args.D, "N * D"]);
  if (args.weight !== undefined) requireArray("layernorm", "weight", args.weight, "Float32Array", [args.D, "D"]);
  if (args.bias !== undefined) requireArray("layernorm", "bias", args.bias, "Float32Array", [args.D, "D"]);
  const eps = requireNumber("layernorm", "eps", args.eps ?? LAYERNORM_DEFAULT_EPS);
  if (eps < 0) throw new Error(`layernorm: eps must be >= 0, got ${eps}`);
  return eps;
}

/**
 * Layer normalisation of each row of `x`, then the optional weight and bias.
 *
 * @param args input, shape, optional weight and bias `[D]`, and eps
 * @returns a new Float32Array of length N * D
 *
 * @example
 * ```ts
 * import { layernorm } from "./reference.ts";
 * layernorm({ x: new Float32Array([1, 3]), N: 1, D: 2, eps: 0 }); // [-1, 1]
 * ```
 */
export function layernorm(args: LayernormArgs): Float32Array {
  const eps = validateLayernorm(args);
  const { x, N, D, weight, bias } = args;
  const out = new Float32Array(N * D);
  for (let n = 0; n < N; n++) {
    const row = x.subarray(n * D, (n + 1) * D);
    const mean = row.reduce((s, v) => s + v, 0) / D;
    const variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / D;
    const std = Math.sqrt(variance + eps);
    for (let d = 0; d < D; d++) {
      out[n * D + d] = ((row[d] - mean) / std) * (weight ? weight[d] : 1) + (bias ? bias[d] : 0);
    }
  }
  return out;
}
