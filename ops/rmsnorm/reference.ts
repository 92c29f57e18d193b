/**
 * Reference for RMS normalisation of the last axis: what correct means, in plain TypeScript.
 *
 * `rmsnorm({ x, N, D, weight, eps })` gives, for each row n of `x` `[N, D]`,
 * `out[n, d] = x[n, d] / sqrt(mean_d(x[n, d]^2) + eps) * weight[n % G, d]`, which is
 * `torch.nn.functional.rms_norm(x, (D,), eps=eps) * weight` when `x` is `[..., G, D]` and `weight`
 * is `[G, D]` (torch broadcasts from the right, so row n meets weight row n % G):
 *
 * - The mean is over D alone, even when `weight` has G > 1 rows (QK-norm over heads): not over
 *   (G, D), as `torch.nn.RMSNorm((H, Dh))` would reduce.
 * - Row n takes weight row `n % G`, so the grouped axis must be the one just left of D
 *   (`[B, S, H, Dh]`, not `[B, H, S, Dh]`). N need not be a multiple of G. G = 1 is one shared
 *   gamma; no weight means ones.
 * - eps defaults to 1e-6, stated because torch's own default (eps=None) is the dtype's machine
 *   epsilon, 1.19e-7 for float32. eps must be finite and >= 0; with eps > 0 an all-zero row gives
 *   zeros, with eps = 0 it gives NaN (0 / 0), as torch does.
 *
 * Accumulation is f64 and the result is rounded to f32 once.
 *
 * @module
 */

import { requireArray, requireInt, requireNumber } from "../validate.ts";

/** The eps used when none is given. */
export const RMSNORM_DEFAULT_EPS = 1e-6;

/** Arguments of {@link rmsnorm}. */
export interface RmsnormArgs {
  /** Input, `[N, D]` row-major. */
  x: Float32Array;
  /** Number of rows (>= 1). */
  N: number;
  /** Length of each row, the axis reduced over (>= 1). */
  D: number;
  /** Optional gamma, `[G, D]` with G >= 1: row n is scaled by weight row n % G. Absent means ones. */
  weight?: Float32Array;
  /** Added to the mean square before the square root; finite and >= 0. Default 1e-6. */
  eps?: number;
}

/**
 * Validates {@link rmsnorm}'s arguments.
 *
 * @param args the arguments
 * @returns the number of weight rows G (0 when there is no weight) and the eps to use
 * @throws Error naming the bad argument and what was expected
 */
export function validateRmsnorm(args: RmsnormArgs): { groups: number; eps: number } {
  requireInt("rmsnorm", "N", args.N, 1);
  requireInt("rmsnorm", "D", args.D, 1);
  requireArray("rmsnorm", "x", args.x, "Float32Array", [args.N * args.D, "N * D"]);
  const eps = requireNumber("rmsnorm", "eps", args.eps ?? RMSNORM_DEFAULT_EPS);
  if (eps < 0) throw new Error(`rmsnorm: eps must be >= 0, got ${eps}`);
  if (args.weight === undefined) return { groups: 0, eps };
  requireArray("rmsnorm", "weight", args.weight, "Float32Array");
  const length = args.weight.length;
  if (length === 0 || length % args.D !== 0) {
    throw new Error(`rmsnorm: weight must have length G * D with G >= 1 and D = ${args.D}, got ${length}`);
  }
  return { groups: length / args.D, eps };
}

/**
 * RMS normalisation of each row of `x`, scaled by its weight row.
 *
 * @param args input, shape, optional weight `[G, D]` and eps
 * @returns a new Float32Array of length N * D
 *
 * @example
 * ```ts
 * import { rmsnorm } from "./reference.ts";
 * rmsnorm({ x: new Float32Array([2, -2, 2, -2]), N: 1, D: 4, eps: 0 }); // [1, -1, 1, -1]
 * ```
 */
export function rmsnorm(args: RmsnormArgs): Float32Array {
  const { groups, eps } = validateRmsnorm(args);
  const { x, N, D, weight } = args;
  const out = new Float32Array(N * D);
  for (let n = 0; n < N; n++) {
    let squares = 0;
    for (let d = 0; d < D; d++) squares += x[n * D + d] ** 2;
    const rms = Math.sqrt(squares / D + eps);
    const group = n % groups;
    const gamma = weight === undefined ? undefined : weight.subarray(group * D, (group + 1) * D);
    for (let d = 0; d < D; d++) out[n * D + d] = (x[n * D + d] / rms) * (gamma ? gamma[d] : 1);
  }
  return out;
}
