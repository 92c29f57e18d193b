/**
 * Reference for layer normalisation of the last axis: what correct means, in plain TypeScript.
 *
 * `layernorm({ x, rows, cols, weight, bias, eps })` gives, for each row of `x` `[rows, cols]`,
 * `out[n, d] = (x[n, d] - mean) / sqrt(var + eps) * weight[d] + bias[d]`, which is
 * `torch.nn.functional.layer_norm(x, (cols,), weight, bias, eps)`:
 *
 * - The variance is the biased one, the mean of squared deviations (divided by cols, not cols - 1).
 * - eps is added to the variance inside the square root, not to the standard deviation.
 * - eps defaults to 1e-5 (torch's default) and must be finite and >= 0; with eps > 0 a constant row
 *   gives zeros (then the bias), with eps = 0 it gives NaN (0 / 0), as torch does.
 * - weight and bias are `[cols]`, each optional: absent means ones and zeros (torch's
 *   `elementwise_affine=False`, as Anima's and Z-Image's adaLN LayerNorms, eps 1e-6).
 * - `modulation` (adaLN of a DiT block over a batch of items, e.g. CFG's two passes) multiplies the
 *   result, bias included, by `1 + scale[b, d]` and adds `shift[b, d]` (when given),
 *   b = ⌊n / rowsPerItem⌋: x is `[items, rowsPerItem, cols]` and scale, shift `[items, cols]`, as
 *   torch broadcasts `layer_norm(x) * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)`. rows must be a
 *   multiple of rowsPerItem.
 *
 * Mean and variance are computed in two passes in f64 (so a row like 1000 + noise loses nothing to
 * cancellation), and the result is rounded to f32 once.
 *
 * @module
 */

import {
  type Modulation,
  requireArgs,
  requireArray,
  requireF32,
  requireInt,
  requireModulation,
  requireModulationShape,
  U32_MAX,
} from "../validate.ts";

export type { Modulation };

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["x", "rows", "cols", "hasWeight", "hasBias", "weight", "bias", "eps", "modulation"];

/** The eps used when none is given (torch's default). */
export const LAYERNORM_DEFAULT_EPS = 1e-5;

/** The sizes and scalars of a {@link layernorm} call: what a plan needs. */
export interface LayernormShape {
  /** Number of rows (>= 1). */
  rows: number;
  /** Length of each row, the axis normalised over (>= 1). */
  cols: number;
  /** Whether a weight `[cols]` is bound (default false). */
  hasWeight?: boolean;
  /** Whether a bias `[cols]` is bound (default false). */
  hasBias?: boolean;
  /** Added to the variance inside the square root; a finite f32 >= 0. Default 1e-5. */
  eps?: number;
  /** adaLN modulation after the affine: rows per item, and whether a shift is bound (default false). */
  modulation?: { rowsPerItem: number; shift?: boolean };
}

/** Arguments of {@link layernorm}. */
export interface LayernormArgs {
  /** Input, `[rows, cols]` row-major. */
  x: Float32Array;
  /** Number of rows (>= 1). */
  rows: number;
  /** Length of each row, the axis normalised over (>= 1). */
  cols: number;
  /** Optional scale, `[cols]`. Absent means ones. */
  weight?: Float32Array;
  /** Optional shift, `[cols]`. Absent means zeros. */
  bias?: Float32Array;
  /** Added to the variance inside the square root; a finite f32 >= 0. Default 1e-5. */
  eps?: number;
  /** Optional adaLN modulation, applied after the weight and bias. */
  modulation?: Modulation;
}

/**
 * Validates {@link layernorm}'s sizes and eps (what {@link LayernormShape} holds).
 *
 * @param shape the sizes, which parameters are bound, and eps
 * @returns the eps to use
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateLayernormShape } from "@xpu/ops/ops/layernorm";
 * validateLayernormShape({ rows: 2, cols: 8, hasWeight: true }); // 1e-5
 * ```
 */
export function validateLayernormShape(shape: LayernormShape): number {
  requireArgs("layernorm", "shape", shape, "{ rows, cols, hasWeight?, hasBias?, eps?, modulation? }", KEYS);
  requireInt("layernorm", "rows", shape.rows, 1, U32_MAX);
  requireInt("layernorm", "cols", shape.cols, 1, U32_MAX);
  const eps = requireF32("layernorm", "eps", shape.eps ?? LAYERNORM_DEFAULT_EPS);
  if (eps < 0) throw new Error(`layernorm: eps must be >= 0, got ${eps}`);
  if (shape.modulation !== undefined) requireModulationShape("layernorm", shape.rows, shape.modulation);
  return eps;
}

/**
 * Validates {@link layernorm}'s arguments: the sizes and eps, then `x`, the weight and the bias.
 *
 * @param args the arguments
 * @returns the eps to use
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateLayernorm } from "@xpu/ops/ops/layernorm";
 * validateLayernorm({ x: new Float32Array(8), rows: 2, cols: 4, eps: 1e-6 }); // 1e-6
 * ```
 */
export function validateLayernorm(args: LayernormArgs): number {
  requireArgs("layernorm", "args", args, "{ x, rows, cols, weight?, bias?, eps?, modulation? }", KEYS);
  const eps = validateLayernormShape({ rows: args.rows, cols: args.cols, eps: args.eps });
  requireArray("layernorm", "x", args.x, "Float32Array", [args.rows * args.cols, "rows * cols"]);
  if (args.modulation !== undefined) requireModulation("layernorm", args.rows, args.cols, args.modulation);
  if (args.weight !== undefined) requireArray("layernorm", "weight", args.weight, "Float32Array", [args.cols, "cols"]);
  if (args.bias !== undefined) requireArray("layernorm", "bias", args.bias, "Float32Array", [args.cols, "cols"]);
  return eps;
}

/**
 * Layer normalisation of each row of `x`, then the optional weight and bias.
 *
 * @param args input, shape, optional weight and bias `[cols]`, and eps
 * @returns a new Float32Array of length rows * cols
 *
 * @example
 * ```ts
 * import { layernorm } from "@xpu/ops";
 * layernorm({ x: new Float32Array([1, 3]), rows: 1, cols: 2, eps: 0 }); // [-1, 1]
 * ```
 */
export function layernorm(args: LayernormArgs): Float32Array {
  const eps = validateLayernorm(args);
  const { x, rows, cols, weight, bias, modulation } = args;
  const out = new Float32Array(rows * cols);
  for (let n = 0; n < rows; n++) {
    const row = x.subarray(n * cols, (n + 1) * cols);
    const mean = row.reduce((s, v) => s + v, 0) / cols;
    const variance = row.reduce((s, v) => s + (v - mean) ** 2, 0) / cols;
    const std = Math.sqrt(variance + eps);
    for (let d = 0; d < cols; d++) {
      let y = ((row[d] - mean) / std) * (weight ? weight[d] : 1) + (bias ? bias[d] : 0);
      if (modulation) {
        const m = Math.floor(n / modulation.rowsPerItem) * cols + d;
        y = y * (1 + modulation.scale[m]) + (modulation.shift ? modulation.shift[m] : 0);
      }
      out[n * cols + d] = y;
    }
  }
  return out;
}
