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

import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["x", "rows", "cols"];

/** The sizes of a {@link transpose} call: what a plan needs. */
export interface TransposeShape {
  /** Rows of `x`, an integer >= 0. */
  rows: number;
  /** Columns of `x`, an integer >= 0. */
  cols: number;
}

/** Arguments of {@link transpose}. */
export interface TransposeArgs extends TransposeShape {
  /** The matrix, `[rows, cols]` row-major. */
  x: Float32Array;
}

/**
 * Validates {@link transpose}'s sizes (what {@link TransposeShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateTransposeShape } from "@xpu/ops/ops/transpose";
 * validateTransposeShape({ rows: 0, cols: 3 }); // passes: an empty matrix transposes to an empty one
 * ```
 */
export function validateTransposeShape(shape: TransposeShape): void {
  requireArgs("transpose", "shape", shape, "{ rows, cols }", KEYS);
  requireInt("transpose", "rows", shape.rows, 0, U32_MAX);
  requireInt("transpose", "cols", shape.cols, 0, U32_MAX);
}

/**
 * Validates {@link transpose}'s arguments: the sizes, then `x`.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateTranspose } from "@xpu/ops/ops/transpose";
 * validateTranspose({ x: new Float32Array(6), rows: 2, cols: 3 }); // passes
 * ```
 */
export function validateTranspose(args: TransposeArgs): void {
  requireArgs("transpose", "args", args, "{ x, rows, cols }", KEYS);
  validateTransposeShape(args);
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
 * import { transpose } from "@xpu/ops";
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
