/**
 * Reference for gather: row selection, what correct means, in plain TypeScript.
 *
 * `gather` matches `torch.index_select(table, 0, indices)`: `table` is `[V, D]`, `indices` is
 * `[N]`, and output row `n` is a copy of table row `indices[n]`, so the result is `[N, D]`. It is
 * not `torch.gather`, which picks one element per index rather than a whole row.
 *
 * Conventions, each a departure from torch or a choice torch leaves open:
 * - An index outside `[0, V)` selects a row of zeros. torch raises instead, but a kernel cannot
 *   raise, and checking every index on the host before dispatch would cost a readback of indices
 *   that may never have left the device. Zeros are the stated answer rather than whatever an
 *   unchecked read returns.
 * - `-1` is out of range like any other negative index: it is not Python's "last row".
 * - Indices are i32 (`Int32Array`), because WGSL has no 64-bit integer; so `V` is at most 2^31 - 1.
 * - An empty `indices` is allowed, as in torch, and gives an empty result.
 *
 * Each output value is a copy of a table value, so the GPU must match exactly.
 *
 * @module
 */

import { requireArray, requireInt } from "../validate.ts";

/** The largest row count an i32 index can address. */
export const MAX_ROWS = 2 ** 31 - 1;

/** Arguments of {@link gather}. */
export interface GatherArgs {
  /** The table, `[V, D]` row-major. */
  table: Float32Array;
  /** Row indices, `[N]`; `N` may be 0. An index outside `[0, V)` selects zeros. */
  indices: Int32Array;
  /** Rows of `table`, in `[1, 2^31 - 1]`. */
  V: number;
  /** Columns of `table` (and of the output). */
  D: number;
}

/**
 * Validates {@link gather}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 */
export function validateGather(args: GatherArgs): void {
  const name = "gather";
  requireInt(name, "V", args.V, 1, MAX_ROWS);
  requireInt(name, "D", args.D, 1);
  requireArray(name, "table", args.table, "Float32Array", [args.V * args.D, "V * D"]);
  requireArray(name, "indices", args.indices, "Int32Array");
}

/**
 * Selects rows of `table`: output row `n` is table row `indices[n]`, or zeros when that index is
 * outside `[0, V)`.
 *
 * @param args the table, its shape `[V, D]` and the row indices
 * @returns a new Float32Array of length `indices.length * D`
 *
 * @example
 * ```ts
 * import { gather } from "./reference.ts";
 * const table = new Float32Array([0, 1, 2, 3, 4, 5]); // [[0, 1], [2, 3], [4, 5]]
 * gather({ table, indices: new Int32Array([2, 0, -1]), V: 3, D: 2 }); // [4, 5, 0, 1, 0, 0]
 * ```
 */
export function gather(args: GatherArgs): Float32Array {
  validateGather(args);
  const { table, indices, V, D } = args;
  const out = new Float32Array(indices.length * D);
  for (const [n, row] of indices.entries()) {
    if (row >= 0 && row < V) out.set(table.subarray(row * D, (row + 1) * D), n * D);
  }
  return out;
}
