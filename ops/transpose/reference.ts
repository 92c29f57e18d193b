/**
 * Reference for transpose: a 2-D matrix turned over its diagonal, in plain TypeScript.
 *
 * `transpose` matches `x.t().contiguous()` for `x` of shape `[rows, cols]`: the result is the
 * `[cols, rows]` matrix, row-major, with `out[c, r] = x[r, c]`. `rows` and `cols` describe `x`, not
 * the result, so swapping them transposes a different matrix. Either may be 0, as in torch; the
 * result is then empty. Values are moved, never computed, so the GPU must match exactly.
 *
 * @module
 */

import { requireArray, requireInt } from "../validate.ts";

/** Arguments of {@link transpose}. */
export interface TransposeArgs {
  /** The matrix, `[rows, cols]` row-major. */
  x: Float32Array;
  /** Rows of `x`, an integer >= 0. */
  rows: number;
  /** Columns of `x`, an integer >= 0. */
  cols: number;
}

/**
 * Validates {@link transpose}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 */
export function validateTranspose(args: TransposeArgs): void {
  requireInt("transpose", "rows", args.rows, 0);
  requireInt("transpose", "cols", args.cols, 0);
  requireArray("transpose", "x", args.x, "Float32Array", [args.rows * args.cols, "rows * cols"]);
}

/**
 * Transposes a `[rows, cols]` matrix into a `[cols, rows]` one.
 *
 * @param args the matrix and its shape
 * @returns a new Float32Array of length rows * cols, `[cols, rows]` row-major
 *
 * @example
 * ```ts
 * import { transpose } from "./reference.ts";
 * transpose({ x: new Float32Array([1, 2, 3, 4, 5, 6]), rows: 2, cols: 3 }); // [1, 4, 2, 5, 3, 6]
 * ```
 */
export function transpose(args: TransposeArgs): Float32Array {
  validateTranspose(args);
  const { x, rows, cols } = args;
  const out = new Float32Array(rows * cols);
  for (let c = 0; c < cols; c++) {
    for (let r = 0; r < rows; r++) out[c * rows + r] = x[r * cols + c];
  }
  return out;
}
