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

/** Every key of {@link placeColumns}'s arguments (its shape's among them). */
const PLACE_KEYS: readonly string[] = ["x", "out", "rows", "cols", "outCols", "col0", "transposed"];

/** The sizes of a {@link placeColumns} call. */
export interface PlaceColumnsShape {
  /** Rows of the block and of `out`, an integer >= 1. */
  rows: number;
  /** Columns of the block, an integer >= 1. */
  cols: number;
  /** Columns of `out`, at least `col0 + cols`. */
  outCols: number;
  /** The first column of `out` the block fills. */
  col0: number;
  /** The block is given transposed, `x` `[cols, rows]` (default false: `[rows, cols]`). */
  transposed?: boolean;
}

/** Arguments of {@link placeColumns}. */
export interface PlaceColumnsArgs extends PlaceColumnsShape {
  /** The block: `[rows, cols]`, or `[cols, rows]` when `transposed`. */
  x: Float32Array;
  /** The matrix it goes into, `[rows, outCols]`; its other columns are kept. */
  out: Float32Array;
}

/**
 * Validates {@link placeColumns}'s sizes.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validatePlaceColumnsShape } from "@xpu/ops/ops/transpose";
 * validatePlaceColumnsShape({ rows: 2, cols: 3, outCols: 8, col0: 5 }); // passes
 * ```
 */
export function validatePlaceColumnsShape(shape: PlaceColumnsShape): void {
  const op = "placeColumns";
  requireArgs(op, "shape", shape, "{ rows, cols, outCols, col0, transposed? }", PLACE_KEYS);
  requireInt(op, "rows", shape.rows, 1, U32_MAX);
  requireInt(op, "cols", shape.cols, 1, U32_MAX);
  requireInt(op, "col0", shape.col0, 0, U32_MAX);
  requireInt(op, "outCols", shape.outCols, shape.col0 + shape.cols, U32_MAX);
  if (shape.transposed !== undefined && typeof shape.transposed !== "boolean") {
    throw new Error(`${op}: transposed must be a boolean, got ${String(shape.transposed)}`);
  }
}

/**
 * Validates {@link placeColumns}'s arguments: the sizes, then `x` and `out`.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validatePlaceColumns } from "@xpu/ops/ops/transpose";
 * validatePlaceColumns({ x: new Float32Array(6), out: new Float32Array(16), rows: 2, cols: 3, outCols: 8, col0: 5 });
 * ```
 */
export function validatePlaceColumns(args: PlaceColumnsArgs): void {
  requireArgs("placeColumns", "args", args, "{ x, out, rows, cols, outCols, col0, transposed? }", PLACE_KEYS);
  validatePlaceColumnsShape(args);
  requireArray("placeColumns", "x", args.x, "Float32Array", [args.rows * args.cols, "rows * cols"]);
  requireArray("placeColumns", "out", args.out, "Float32Array", [args.rows * args.outCols, "rows * outCols"]);
}

/**
 * Places a block of columns into a wider matrix: `out[r, col0 + c] = x[r, c]` (or `x[c, r]` when
 * `transposed`), the other columns of `out` kept; as `out[:, col0:col0 + cols] = x` (or `x.t()`) in
 * torch. What the output of one row block of a weight split across bindings needs, and a product
 * computed transposed.
 *
 * @param args the block, the matrix and the sizes
 * @returns a new `[rows, outCols]` matrix: `out` with the block's columns placed
 *
 * @example
 * ```ts
 * import { placeColumns } from "@xpu/ops/ops/transpose";
 * placeColumns({ x: new Float32Array([1, 2]), out: new Float32Array(6), rows: 2, cols: 1, outCols: 3, col0: 1 });
 * // [0, 1, 0, 0, 2, 0]
 * ```
 */
export function placeColumns(args: PlaceColumnsArgs): Float32Array {
  validatePlaceColumns(args);
  const { x, rows, cols, outCols, col0, transposed } = args;
  const out = Float32Array.from(args.out);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) out[r * outCols + col0 + c] = transposed ? x[c * rows + r] : x[r * cols + c];
  }
  return out;
}
