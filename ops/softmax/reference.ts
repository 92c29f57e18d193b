/**
 * Reference for softmax along the last axis: what correct means, in plain TypeScript.
 *
 * `softmax({ x, rows, cols })` matches `torch.softmax(x, -1)` for `x` of shape `[rows, cols]`
 * (row-major): each row is shifted by its maximum before exponentiation, so logits of ±1000 give
 * the same answer as logits near zero instead of overflowing. A `-Infinity` entry gets exactly 0
 * and the rest of its row is unaffected; a row whose entries are all `-Infinity` has no finite
 * maximum to shift by and gives NaN in every element, as torch.softmax does (the "safe" softmax
 * that returns zeros for a fully masked row is a different function). Accumulation is f64 and the
 * result is rounded to f32 once.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["x", "rows", "cols"];

/** The sizes of a {@link softmax} call: what a plan needs. */
export interface SoftmaxShape {
  /** Number of rows (>= 1). */
  rows: number;
  /** Length of each row, the axis reduced over (>= 1). */
  cols: number;
}

/** Arguments of {@link softmax}. */
export interface SoftmaxArgs extends SoftmaxShape {
  /** Logits, `[rows, cols]` row-major. */
  x: Float32Array;
}

/**
 * Validates {@link softmax}'s sizes (what {@link SoftmaxShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateSoftmaxShape } from "@xpu/ops/ops/softmax";
 * validateSoftmaxShape({ rows: 2, cols: 3 }); // passes; rows: 0 would throw "softmax: rows must be ..."
 * ```
 */
export function validateSoftmaxShape(shape: SoftmaxShape): void {
  requireArgs("softmax", "shape", shape, "{ rows, cols }", KEYS);
  requireInt("softmax", "rows", shape.rows, 1, U32_MAX);
  requireInt("softmax", "cols", shape.cols, 1, U32_MAX);
}

/**
 * Validates {@link softmax}'s arguments: the sizes, then `x`.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateSoftmax } from "@xpu/ops/ops/softmax";
 * validateSoftmax({ x: new Float32Array(6), rows: 2, cols: 3 }); // passes
 * ```
 */
export function validateSoftmax(args: SoftmaxArgs): void {
  requireArgs("softmax", "args", args, "{ x, rows, cols }", KEYS);
  validateSoftmaxShape(args);
  requireArray("softmax", "x", args.x, "Float32Array", [args.rows * args.cols, "rows * cols"]);
}

/**
 * Softmax of each row of `x`.
 *
 * @param args logits and their shape
 * @returns a new Float32Array of length rows * cols
 *
 * @example
 * ```ts
 * import { softmax } from "@xpu/ops";
 * softmax({ x: new Float32Array([0, Math.log(3)]), rows: 1, cols: 2 }); // [0.25, 0.75]
 * ```
 */
export function softmax(args: SoftmaxArgs): Float32Array {
  validateSoftmax(args);
  const { x, rows, cols } = args;
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const row = x.subarray(r * cols, (r + 1) * cols);
    const max = row.reduce((m, v) => Math.max(m, v), -Infinity);
    let total = 0;
    for (const v of row) total += Math.exp(v - max);
    for (let c = 0; c < cols; c++) out[r * cols + c] = Math.exp(row[c] - max) / total;
  }
  return out;
}
