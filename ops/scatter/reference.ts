/**
 * Reference for scatter: indexed accumulation, what correct means, in plain TypeScript.
 *
 * `scatter` matches `torch.zeros(rows, cols).scatter_add_(1, index, src)`: `src` and `index` are
 * `[rows, indexCols]`, and `src[n, k]` is added to `out[n, index[n, k]]`, so the result is `[rows, cols]`.
 *
 * Conventions, each a departure from torch or a choice torch leaves open:
 * - Colliding indices accumulate. It is `scatter_add_`, not `scatter_`: a "last write wins" rule
 *   is, on a GPU, whichever write the hardware happened to order last, which is no rule at all;
 *   a sum is the same for every order of the writes, up to f32 rounding.
 * - `self` is implicitly zero: the op returns the scattered sums, not an update of a tensor.
 * - An index outside `[0, cols)` (negative, or `>= cols`) is dropped: its value is added nowhere. torch
 *   raises; a kernel cannot. `-1` is dropped too, not read as Python's "last column".
 * - `index` is i32 (`Int32Array`), because WGSL has no 64-bit integer; so `cols` is at most 2^31 - 1.
 * - `rows = 0` and `indexCols = 0` are allowed, as in torch; `indexCols = 0` gives all zeros.
 *
 * The sums are taken in f64 and rounded to f32 once. A GPU adds in f32 in whatever order its
 * atomics land, so it agrees within the rounding of an f32 sum of that many terms, not exactly.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

export * from "./index_copy_reference.ts";
/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["src", "index", "rows", "indexCols", "cols"];

/** The largest column count an i32 index can address. */
export const MAX_COLUMNS = 2 ** 31 - 1;

/** The sizes of a {@link scatter} call: what a plan needs. */
export interface ScatterShape {
  /** Rows of `src`, `index` and the output (>= 0). */
  rows: number;
  /** Columns of `src` and `index`: values added into each output row (>= 0). */
  indexCols: number;
  /** Columns of the output, in `[1, 2^31 - 1]` (an i32 index addresses them). */
  cols: number;
}

/** Arguments of {@link scatter}. */
export interface ScatterArgs extends ScatterShape {
  /** Values to add, `[rows, indexCols]` row-major. */
  src: Float32Array;
  /** Target column of each value, `[rows, indexCols]`; one outside `[0, cols)` is dropped. */
  index: Int32Array;
}

/**
 * Validates {@link scatter}'s sizes (what {@link ScatterShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateScatterShape } from "@xpu/ops/ops/scatter";
 * validateScatterShape({ rows: 4, indexCols: 8, cols: 16 }); // passes
 * ```
 */
export function validateScatterShape(shape: ScatterShape): void {
  const name = "scatter";
  requireArgs(name, "shape", shape, "{ rows, indexCols, cols }", KEYS);
  requireInt(name, "rows", shape.rows, 0, U32_MAX);
  requireInt(name, "indexCols", shape.indexCols, 0, U32_MAX);
  requireInt(name, "cols", shape.cols, 1, MAX_COLUMNS);
}

/**
 * Validates {@link scatter}'s arguments: the sizes, then `src` and `index`.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateScatter } from "@xpu/ops/ops/scatter";
 * validateScatter({ src: new Float32Array(2), index: new Int32Array(2), rows: 1, indexCols: 2, cols: 3 }); // passes
 * ```
 */
export function validateScatter(args: ScatterArgs): void {
  const name = "scatter";
  requireArgs(name, "args", args, "{ src, index, rows, indexCols, cols }", KEYS);
  validateScatterShape(args);
  requireArray(name, "src", args.src, "Float32Array", [args.rows * args.indexCols, "rows * indexCols"]);
  requireArray(name, "index", args.index, "Int32Array", [args.rows * args.indexCols, "rows * indexCols"]);
}

/**
 * Adds each `src[n, k]` into column `index[n, k]` of output row `n`, starting from zeros;
 * colliding indices accumulate and an index outside `[0, cols)` is dropped.
 *
 * @param args the values, their target columns and the shapes `rows`, `indexCols`, `cols`
 * @returns a new Float32Array of length `rows * cols`
 *
 * @example
 * ```ts
 * import { scatter } from "@xpu/ops";
 * const src = new Float32Array([1, 2, 4, 8]);
 * scatter({ src, index: new Int32Array([0, 0, 2, -1]), rows: 1, indexCols: 4, cols: 3 }); // [3, 0, 4]
 * ```
 */
export function scatter(args: ScatterArgs): Float32Array {
  validateScatter(args);
  const { src, index, rows, indexCols, cols } = args;
  const sums = new Float64Array(rows * cols);
  for (let n = 0; n < rows; n++) {
    for (let k = 0; k < indexCols; k++) {
      const column = index[n * indexCols + k];
      if (column >= 0 && column < cols) sums[n * cols + column] += src[n * indexCols + k];
    }
  }
  return Float32Array.from(sums);
}
