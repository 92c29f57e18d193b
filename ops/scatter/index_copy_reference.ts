/**
 * Reference for `indexCopy`: indexed row writes into an existing tensor, in plain TypeScript.
 *
 * `indexCopy({ out, src, index, outer, rows, cols })` matches
 * `out.view(outer, rows, cols).index_copy_(1, index, src.view(outer, indexLength, cols))`: for every
 * `o < outer` and `i < indexLength`, row `index[i]` of block `o` of `out` becomes row `i` of block `o`
 * of `src`, and every other row of `out` keeps its value. The middle axis of a 3-D view is torch's
 * `dim`: `outer = 1` is `index_copy_(0, ...)` on a `[rows, cols]` tensor, and a KV cache
 * `[kvHeads, capacity, headDim]` takes new positions' keys `[kvHeads, n, headDim]` at positions
 * `index` (what transformers' cache update writes).
 *
 * Conventions, each a departure from torch or a choice torch leaves open:
 * - An index outside `[0, rows)` is dropped: its row is written nowhere. torch raises; a kernel cannot.
 *   `-1` is dropped too, not read as Python's "last row".
 * - A repeated index is refused by this reference. torch documents the result as nondeterministic
 *   (whichever copy lands last); the GPU entry point cannot check indices it never reads back, and
 *   which of the rows lands there is then unspecified.
 * - `index` is i32 (`Int32Array`), so `rows` is at most 2^31 - 1; `indexLength = 0` leaves `out` as it is.
 *
 * Every written value is a copy of a `src` value, so the GPU must match exactly.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["out", "src", "index", "outer", "rows", "cols", "indexLength"];

/** The sizes of an {@link indexCopy} call: what a plan needs. */
export interface IndexCopyShape {
  /** Blocks of the view, the axes before the indexed one folded (>= 1). */
  outer: number;
  /** Rows of `out` per block, the indexed axis, in `[1, 2^31 - 1]`. */
  rows: number;
  /** Values per row, the axes after the indexed one folded (>= 1). */
  cols: number;
  /** Rows of `src` per block and length of `index` (>= 0). */
  indexLength: number;
}

/** Arguments of {@link indexCopy}. */
export interface IndexCopyArgs extends Omit<IndexCopyShape, "indexLength"> {
  /** The tensor written into, `[outer, rows, cols]` row-major (not modified: a copy is returned). */
  out: Float32Array;
  /** The rows to write, `[outer, indexLength, cols]`. */
  src: Float32Array;
  /** The row of `out` each row of `src` goes to, `[indexLength]`; one outside `[0, rows)` is dropped. */
  index: Int32Array;
}

/**
 * Validates {@link indexCopy}'s sizes (what {@link IndexCopyShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateIndexCopyShape } from "@xpu/ops/ops/scatter";
 * validateIndexCopyShape({ outer: 8, rows: 4096, cols: 128, indexLength: 1 }); // passes: one position of a KV cache
 * ```
 */
export function validateIndexCopyShape(shape: IndexCopyShape): void {
  const name = "indexCopy";
  requireArgs(name, "shape", shape, "{ outer, rows, cols, indexLength }", KEYS);
  requireInt(name, "outer", shape.outer, 1, U32_MAX);
  requireInt(name, "rows", shape.rows, 1, 2 ** 31 - 1);
  requireInt(name, "cols", shape.cols, 1, U32_MAX);
  requireInt(name, "indexLength", shape.indexLength, 0, U32_MAX);
  for (
    const [what, n] of [["outer * rows * cols", shape.outer * shape.rows * shape.cols], [
      "outer * indexLength * cols",
      shape.outer * shape.indexLength * shape.cols,
    ]] as const
  ) {
    if (n > U32_MAX) throw new Error(`indexCopy: ${what} must be at most ${U32_MAX} (u32 indices), got ${n}`);
  }
}

/**
 * Validates {@link indexCopy}'s arguments: the sizes, the arrays, and no repeated in-range index.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateIndexCopy } from "@xpu/ops/ops/scatter";
 * validateIndexCopy({ out: new Float32Array(6), src: new Float32Array(2), index: new Int32Array([2]), outer: 1, rows: 3, cols: 2 }); // passes
 * ```
 */
export function validateIndexCopy(args: IndexCopyArgs): void {
  const name = "indexCopy";
  requireArgs(name, "args", args, "{ out, src, index, outer, rows, cols }", KEYS);
  requireArray(name, "index", args.index, "Int32Array");
  const { outer, rows, cols } = args;
  validateIndexCopyShape({ outer, rows, cols, indexLength: args.index.length });
  requireArray(name, "out", args.out, "Float32Array", [outer * rows * cols, "outer * rows * cols"]);
  requireArray(name, "src", args.src, "Float32Array", [
    outer * args.index.length * cols,
    "outer * index.length * cols",
  ]);
  const seen = new Map<number, number>();
  for (const [i, r] of args.index.entries()) {
    if (r < 0 || r >= rows) continue;
    if (seen.has(r)) {
      throw new Error(`indexCopy: index must not repeat a row (index[${seen.get(r)}] and index[${i}] are both ${r})`);
    }
    seen.set(r, i);
  }
}

/**
 * Writes the rows of `src` into a copy of `out` at the rows `index` names.
 *
 * @param args the tensor written into, the rows, their destinations and the shapes
 * @returns a new Float32Array, `[outer, rows, cols]`
 *
 * @example
 * ```ts
 * import { indexCopy } from "@xpu/ops/ops/scatter";
 * const out = new Float32Array([0, 0, 0, 0, 0, 0]); // [rows 3, cols 2]
 * indexCopy({ out, src: new Float32Array([1, 2, 3, 4]), index: new Int32Array([2, -1]), outer: 1, rows: 3, cols: 2 });
 * // [0, 0, 0, 0, 1, 2]: row 2 written, the row for -1 dropped
 * ```
 */
export function indexCopy(args: IndexCopyArgs): Float32Array {
  validateIndexCopy(args);
  const { out, src, index, outer, rows, cols } = args;
  const n = index.length;
  const result = out.slice();
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < n; i++) {
      const r = index[i];
      if (r < 0 || r >= rows) continue;
      result.set(src.subarray((o * n + i) * cols, (o * n + i + 1) * cols), (o * rows + r) * cols);
    }
  }
  return result;
}
