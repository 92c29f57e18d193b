/**
 * Reference for RMS normalisation of the last axis: what correct means, in plain TypeScript.
 *
 * `rmsnorm({ x, rows, cols, weight, eps })` gives, for each row n of `x` `[rows, cols]`,
 * `out[n, d] = x[n, d] / sqrt(mean_d(x[n, d]^2) + eps) * weight[n % G, d]`, which is
 * `torch.nn.functional.rms_norm(x, (cols,), eps=eps) * weight` when `x` is `[..., G, cols]` and `weight`
 * is `[G, cols]` (torch broadcasts from the right, so row n meets weight row n % G):
 *
 * - The mean is over cols alone, even when `weight` has G > 1 rows (QK-norm over heads): not over
 *   (G, cols), as `torch.nn.RMSNorm((H, Dh))` would reduce.
 * - Row n takes weight row `n % G`, so the grouped axis must be the one just left of cols
 *   (`[B, S, H, Dh]`, not `[B, H, S, Dh]`). rows need not be a multiple of G. G = 1 is one shared
 *   gamma; no weight means ones.
 * - eps defaults to 1e-6, stated because torch's own default (eps=None) is the dtype's machine
 *   epsilon, 1.19e-7 for float32. eps must be finite and >= 0; with eps > 0 an all-zero row gives
 *   zeros, with eps = 0 it gives NaN (0 / 0), as torch does.
 * - `modulation` (adaLN of a DiT block over a batch of items, e.g. CFG's two passes) multiplies the
 *   result by `1 + scale[b, d]` and adds `shift[b, d]` (when given), b = ⌊n / rowsPerItem⌋: x is
 *   `[items, rowsPerItem, cols]` and scale, shift `[items, cols]`, as torch broadcasts
 *   `rms_norm(x) * w * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)`. rows must be a multiple of
 *   rowsPerItem. Z-Image's blocks use a scale alone.
 *
 * Accumulation is f64 and the result is rounded to f32 once.
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
const KEYS: readonly string[] = ["x", "rows", "cols", "groups", "weight", "eps", "modulation"];

/** The eps used when none is given. */
export const RMSNORM_DEFAULT_EPS = 1e-6;

/** The sizes and scalars of an {@link rmsnorm} call: what a plan needs. */
export interface RmsnormShape {
  /** Number of rows (>= 1). */
  rows: number;
  /** Length of each row, the axis reduced over (>= 1). */
  cols: number;
  /** Rows of the weight, G (0 or absent: no weight). Set by {@link validateRmsnorm} from the weight's length. */
  groups?: number;
  /** Added to the mean square before the square root; a finite f32 >= 0. Default 1e-6. */
  eps?: number;
  /** adaLN modulation after the weight: rows per item, and whether a shift is bound (default false). */
  modulation?: { rowsPerItem: number; shift?: boolean };
}

/** Arguments of {@link rmsnorm}. */
export interface RmsnormArgs extends Omit<RmsnormShape, "groups" | "modulation"> {
  /** Input, `[rows, cols]` row-major. */
  x: Float32Array;
  /** Optional gamma, `[G, cols]` with G >= 1: row n is scaled by weight row n % G. Absent means ones. */
  weight?: Float32Array;
  /** Optional adaLN modulation, applied after the weight. */
  modulation?: Modulation;
}

/**
 * Validates {@link rmsnorm}'s sizes and scalars (what {@link RmsnormShape} holds).
 *
 * @param shape the sizes, the weight's row count and eps
 * @returns the weight's row count G (0 for none) and the eps to use
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateRmsnormShape } from "@xpu/ops/ops/rmsnorm";
 * validateRmsnormShape({ rows: 2, cols: 8 }); // { groups: 0, eps: 1e-6 }
 * ```
 */
export function validateRmsnormShape(shape: RmsnormShape): { groups: number; eps: number } {
  requireArgs("rmsnorm", "shape", shape, "{ rows, cols, groups?, eps?, modulation? }", KEYS);
  requireInt("rmsnorm", "rows", shape.rows, 1, U32_MAX);
  requireInt("rmsnorm", "cols", shape.cols, 1, U32_MAX);
  const groups = requireInt("rmsnorm", "groups", shape.groups ?? 0, 0, U32_MAX);
  const eps = requireF32("rmsnorm", "eps", shape.eps ?? RMSNORM_DEFAULT_EPS);
  if (eps < 0) throw new Error(`rmsnorm: eps must be >= 0, got ${eps}`);
  if (shape.modulation !== undefined) requireModulationShape("rmsnorm", shape.rows, shape.modulation);
  return { groups, eps };
}

/**
 * Validates {@link rmsnorm}'s arguments: the sizes and eps, then `x` and the weight.
 *
 * @param args the arguments
 * @returns the number of weight rows G (0 when there is no weight) and the eps to use
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateRmsnorm } from "@xpu/ops/ops/rmsnorm";
 * validateRmsnorm({ x: new Float32Array(8), rows: 2, cols: 4, weight: new Float32Array(8) }); // { groups: 2, eps: 1e-6 }
 * ```
 */
export function validateRmsnorm(args: RmsnormArgs): { groups: number; eps: number } {
  requireArgs("rmsnorm", "args", args, "{ x, rows, cols, weight?, eps?, modulation? }", KEYS);
  const { eps } = validateRmsnormShape({ rows: args.rows, cols: args.cols, eps: args.eps });
  requireArray("rmsnorm", "x", args.x, "Float32Array", [args.rows * args.cols, "rows * cols"]);
  if (args.modulation !== undefined) requireModulation("rmsnorm", args.rows, args.cols, args.modulation);
  if (args.weight === undefined) return { groups: 0, eps };
  requireArray("rmsnorm", "weight", args.weight, "Float32Array");
  const length = args.weight.length;
  if (length === 0 || length % args.cols !== 0) {
    throw new Error(`rmsnorm: weight must have length G * cols with G >= 1 and cols = ${args.cols}, got ${length}`);
  }
  return { groups: length / args.cols, eps };
}

/**
 * RMS normalisation of each row of `x`, scaled by its weight row.
 *
 * @param args input, shape, optional weight `[G, cols]` and eps
 * @returns a new Float32Array of length rows * cols
 *
 * @example
 * ```ts
 * import { rmsnorm } from "@xpu/ops";
 * rmsnorm({ x: new Float32Array([2, -2, 2, -2]), rows: 1, cols: 4, eps: 0 }); // [1, -1, 1, -1]
 * ```
 */
export function rmsnorm(args: RmsnormArgs): Float32Array {
  const { groups, eps } = validateRmsnorm(args);
  const { x, rows, cols, weight, modulation } = args;
  const out = new Float32Array(rows * cols);
  for (let n = 0; n < rows; n++) {
    let squares = 0;
    for (let d = 0; d < cols; d++) squares += x[n * cols + d] ** 2;
    const rms = Math.sqrt(squares / cols + eps);
    const group = n % groups;
    const gamma = weight === undefined ? undefined : weight.subarray(group * cols, (group + 1) * cols);
    for (let d = 0; d < cols; d++) {
      let y = (x[n * cols + d] / rms) * (gamma ? gamma[d] : 1);
      if (modulation) {
        const m = Math.floor(n / modulation.rowsPerItem) * cols + d;
        y = y * (1 + modulation.scale[m]) + (modulation.shift ? modulation.shift[m] : 0);
      }
      out[n * cols + d] = y;
    }
  }
  return out;
}

/** Most columns {@link rmsnormResidual}'s kernel holds in registers (256 invocations x 32 each). */
export const RESIDUAL_MAX_COLS = 8192;

/** Every key of {@link rmsnormResidual}'s arguments (its shape's among them). */
const RESIDUAL_KEYS: readonly string[] = ["x", "delta", "weight", "rows", "cols", "row0", "add", "eps"];

/** The sizes and scalars of an {@link rmsnormResidual} call. */
export interface RmsnormResidualShape {
  /** Rows normalised (>= 1), from `row0`. */
  rows: number;
  /** Length of each row (>= 1, at most {@link RESIDUAL_MAX_COLS}). */
  cols: number;
  /** The first row of `x` (and `delta`) normalised; default 0. */
  row0?: number;
  /** Whether `delta` is added to `x` first (the residual connection). */
  add: boolean;
  /** Added to the mean square; a finite f32 >= 0. Default 1e-6. */
  eps?: number;
}

/** Arguments of {@link rmsnormResidual}. */
export interface RmsnormResidualArgs extends RmsnormResidualShape {
  /** The residual stream, `[row0 + rows, cols]`; its rows from row0 are updated when `add`. */
  x: Float32Array;
  /** What is added to x, `[row0 + rows, cols]` (read only when `add`). */
  delta: Float32Array;
  /** The norm's weight, `[cols]`. */
  weight: Float32Array;
}

/**
 * Validates {@link rmsnormResidual}'s sizes and scalars.
 *
 * @param shape the sizes
 * @returns row0 and eps with their defaults
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateRmsnormResidualShape } from "@xpu/ops/ops/rmsnorm";
 * validateRmsnormResidualShape({ rows: 1, cols: 2048, row0: 511, add: true }); // { row0: 511, eps: 1e-6 }
 * ```
 */
export function validateRmsnormResidualShape(shape: RmsnormResidualShape): { row0: number; eps: number } {
  const op = "rmsnormResidual";
  requireArgs(op, "shape", shape, "{ rows, cols, row0?, add, eps? }", RESIDUAL_KEYS);
  requireInt(op, "rows", shape.rows, 1, U32_MAX);
  requireInt(op, "cols", shape.cols, 1, RESIDUAL_MAX_COLS);
  const row0 = requireInt(op, "row0", shape.row0 ?? 0, 0, U32_MAX);
  if (typeof shape.add !== "boolean") throw new Error(`${op}: add must be a boolean, got ${String(shape.add)}`);
  const eps = requireF32(op, "eps", shape.eps ?? RMSNORM_DEFAULT_EPS);
  if (eps < 0) throw new Error(`${op}: eps must be >= 0, got ${eps}`);
  return { row0, eps };
}

/**
 * Validates {@link rmsnormResidual}'s arguments: the sizes, then the arrays.
 *
 * @param args the arguments
 * @returns row0 and eps with their defaults
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateRmsnormResidual } from "@xpu/ops/ops/rmsnorm";
 * const x = new Float32Array(4), delta = new Float32Array(4), weight = new Float32Array(2);
 * validateRmsnormResidual({ x, delta, weight, rows: 2, cols: 2, add: true }); // { row0: 0, eps: 1e-6 }
 * ```
 */
export function validateRmsnormResidual(args: RmsnormResidualArgs): { row0: number; eps: number } {
  const op = "rmsnormResidual";
  requireArgs(op, "args", args, "{ x, delta, weight, rows, cols, row0?, add, eps? }", RESIDUAL_KEYS);
  const checked = validateRmsnormResidualShape(args);
  const total = (checked.row0 + args.rows) * args.cols;
  requireArray(op, "x", args.x, "Float32Array", [total, "(row0 + rows) * cols"]);
  requireArray(op, "delta", args.delta, "Float32Array", [total, "(row0 + rows) * cols"]);
  requireArray(op, "weight", args.weight, "Float32Array", [args.cols, "cols"]);
  return checked;
}

/**
 * The residual add and the RMSNorm after it, as a transformer layer runs them: rows
 * `[row0, row0 + rows)` of `x` get `delta` added (when `add`; each sum rounded to f32, as the tensor
 * holds it), and each is normalised: `out[n] = x[row0 + n] / sqrt(mean(x[row0 + n]^2) + eps) *
 * weight`, i.e. `x += delta; out = F.rms_norm(x[row0:], (cols,), weight, eps)`.
 *
 * @param args the stream, the delta, the weight, the sizes
 * @returns `x` as updated (`[row0 + rows, cols]`, rows before row0 as given) and `out` (`[rows, cols]`)
 *
 * @example
 * ```ts
 * import { rmsnormResidual } from "@xpu/ops/ops/rmsnorm";
 * const x = new Float32Array([1, 1]), delta = new Float32Array([1, -3]), weight = new Float32Array([1, 1]);
 * rmsnormResidual({ x, delta, weight, rows: 1, cols: 2, add: true, eps: 0 }).out; // [1, -1]: x is [2, -2]
 * ```
 */
export function rmsnormResidual(args: RmsnormResidualArgs): { x: Float32Array; out: Float32Array } {
  const { row0, eps } = validateRmsnormResidual(args);
  const { rows, cols, weight } = args;
  const x = Float32Array.from(args.x);
  const out = new Float32Array(rows * cols);
  for (let n = 0; n < rows; n++) {
    const base = (row0 + n) * cols;
    if (args.add) { for (let c = 0; c < cols; c++) x[base + c] = x[base + c] + args.delta[base + c]; }
    let squares = 0;
    for (let c = 0; c < cols; c++) squares += x[base + c] ** 2;
    const inv = 1 / Math.sqrt(squares / cols + eps);
    for (let c = 0; c < cols; c++) out[n * cols + c] = x[base + c] * inv * weight[c];
  }
  return { x, out };
}
