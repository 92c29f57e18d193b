/**
 * Reference for gather: row selection, what correct means, in plain TypeScript.
 *
 * `gather` matches `torch.index_select(table, 0, index)`: `table` is `[rows, cols]`, `index` is
 * `[indexLength]`, and output row `n` is a copy of table row `index[n]`, so the result is `[indexLength, cols]`. It is
 * not `torch.gather`, which picks one element per index rather than a whole row.
 *
 * Conventions, each a departure from torch or a choice torch leaves open:
 * - An index outside `[0, rows)` selects a row of zeros. torch raises instead, but a kernel cannot
 *   raise, and checking every index on the host before dispatch would cost a readback of indices
 *   that may never have left the device. Zeros are the stated answer rather than whatever an
 *   unchecked read returns.
 * - `-1` is out of range like any other negative index: it is not Python's "last row".
 * - Indices are i32 (`Int32Array`), because WGSL has no 64-bit integer; so `rows` is at most 2^31 - 1.
 * - An empty `index` is allowed, as in torch, and gives an empty result.
 *
 * Each output value is a copy of a table value, so the GPU must match exactly.
 *
 * @module
 */

import { Q4_GROUP, unpackQ4, unpackQ8 } from "../matvec/reference.ts";
import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The largest row count an i32 index can address. */
export const MAX_ROWS = 2 ** 31 - 1;

/**
 * The keys a shape or arguments object may carry: sizes and arrays (a plan may be given the
 * arguments), and gatherBlocksPlan's `blockRows`.
 */
const KEYS: readonly string[] = ["table", "index", "rows", "cols", "indexLength", "blockRows"];

/** The sizes of a {@link gather} call: what a plan needs. */
export interface GatherShape {
  /** Rows of `table`, in `[1, 2^31 - 1]` (an i32 index addresses them). */
  rows: number;
  /** Columns of `table` (and of the output), >= 1. */
  cols: number;
  /** Length of `index`, the output's row count; may be 0. */
  indexLength: number;
}

/** Arguments of {@link gather}. */
export interface GatherArgs {
  /** The table, `[rows, cols]` row-major. */
  table: Float32Array;
  /** Row indices, `[indexLength]`; may be empty. An index outside `[0, rows)` selects zeros. */
  index: Int32Array;
  /** Rows of `table`, in `[1, 2^31 - 1]`. */
  rows: number;
  /** Columns of `table` (and of the output). */
  cols: number;
}

/**
 * Validates {@link gather}'s sizes (what {@link GatherShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateGatherShape } from "@xpu/ops/ops/gather";
 * validateGatherShape({ rows: 32000, cols: 4096, indexLength: 16 }); // passes
 * ```
 */
export function validateGatherShape(shape: GatherShape): void {
  const name = "gather";
  requireArgs(name, "shape", shape, "{ rows, cols, indexLength }", KEYS);
  requireInt(name, "rows", shape.rows, 1, MAX_ROWS);
  requireInt(name, "cols", shape.cols, 1, U32_MAX);
  requireInt(name, "indexLength", shape.indexLength, 0, U32_MAX);
}

/**
 * Validates {@link gather}'s arguments: the sizes, then `table` and `index`.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateGather } from "@xpu/ops/ops/gather";
 * validateGather({ table: new Float32Array(6), index: new Int32Array([2, 0]), rows: 3, cols: 2 }); // passes
 * ```
 */
export function validateGather(args: GatherArgs): void {
  const name = "gather";
  requireArgs(name, "args", args, "{ table, index, rows, cols }", KEYS);
  requireInt(name, "rows", args.rows, 1, MAX_ROWS);
  requireInt(name, "cols", args.cols, 1, U32_MAX);
  requireArray(name, "table", args.table, "Float32Array", [args.rows * args.cols, "rows * cols"]);
  requireArray(name, "index", args.index, "Int32Array");
  validateGatherShape({ rows: args.rows, cols: args.cols, indexLength: args.index.length });
}

/**
 * Selects rows of `table`: output row `n` is table row `index[n]`, or zeros when that index is
 * outside `[0, rows)`.
 *
 * @param args the table, its shape `[rows, cols]` and the row index
 * @returns a new Float32Array of length `index.length * cols`
 *
 * @example
 * ```ts
 * import { gather } from "@xpu/ops";
 * const table = new Float32Array([0, 1, 2, 3, 4, 5]); // [[0, 1], [2, 3], [4, 5]]
 * gather({ table, index: new Int32Array([2, 0, -1]), rows: 3, cols: 2 }); // [4, 5, 0, 1, 0, 0]
 * ```
 */
export function gather(args: GatherArgs): Float32Array {
  validateGather(args);
  const { table, index, rows, cols } = args;
  const out = new Float32Array(index.length * cols);
  for (const [n, row] of index.entries()) {
    if (row >= 0 && row < rows) out.set(table.subarray(row * cols, (row + 1) * cols), n * cols);
  }
  return out;
}

/** Formats of a quantized table (matvec's wire formats): `q8` (packQ8, a scale a row), `q4g128` (packQ4, a scale per 128 columns). */
export type GatherTableFormat = "q8" | "q4g128";

/** Arguments of {@link gatherQuantized}. */
export interface GatherQuantizedArgs {
  /** The table's format. */
  format: GatherTableFormat;
  /** The packed codes, `[rows, ceil(cols / 4)]` (q8) or `[rows, ceil(cols / 8)]` (q4g128) words. */
  table: Uint32Array;
  /** The scales, `[rows]` (q8) or `[rows, ceil(cols / 128)]` (q4g128). */
  scales: Float32Array;
  /** Row indices; an index outside `[0, rows)` selects zeros. */
  index: Int32Array;
  /** Rows of the table, in `[1, 2^31 - 1]`. */
  rows: number;
  /** Columns of the table (and of the output). */
  cols: number;
}

/**
 * u32 words and scales of one row of a quantized table.
 *
 * @param format the table's format
 * @param cols its columns
 * @returns the words and the scales a row holds
 *
 * @example
 * ```ts
 * import { quantizedRowWords } from "@xpu/ops/ops/gather";
 * quantizedRowWords("q4g128", 300); // { words: 38, scales: 3 }
 * ```
 */
export function quantizedRowWords(format: GatherTableFormat, cols: number): { words: number; scales: number } {
  return format === "q8"
    ? { words: Math.ceil(cols / 4), scales: 1 }
    : { words: Math.ceil(cols / 8), scales: Math.ceil(cols / Q4_GROUP) };
}

/**
 * Validates {@link gatherQuantized}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateGatherQuantized } from "@xpu/ops/ops/gather";
 * validateGatherQuantized({ format: "q8", table: new Uint32Array(2), scales: new Float32Array(2), index: new Int32Array([1]), rows: 2, cols: 3 });
 * ```
 */
export function validateGatherQuantized(args: GatherQuantizedArgs): void {
  const name = "gatherQuantized";
  requireArgs(name, "args", args, "{ format, table, scales, index, rows, cols }", [
    "format",
    "table",
    "scales",
    "index",
    "rows",
    "cols",
  ]);
  if (args.format !== "q8" && args.format !== "q4g128") {
    throw new Error(`${name}: format must be "q8" or "q4g128", got ${JSON.stringify(args.format)}`);
  }
  requireInt(name, "rows", args.rows, 1, MAX_ROWS);
  requireInt(name, "cols", args.cols, 1, U32_MAX);
  const per = quantizedRowWords(args.format, args.cols);
  requireArray(name, "table", args.table, "Uint32Array", [args.rows * per.words, `rows * ${per.words} words`]);
  requireArray(name, "scales", args.scales, "Float32Array", [args.rows * per.scales, `rows * ${per.scales}`]);
  requireArray(name, "index", args.index, "Int32Array");
  validateGatherShape({ rows: args.rows, cols: args.cols, indexLength: args.index.length });
}

/**
 * Selects rows of a quantized table, dequantized: output row `n` is table row `index[n]`'s codes
 * times their scales (`code * scale[row]` for q8, `code * scale[row, col / 128]` for q4g128), in f32,
 * or zeros when the index is outside `[0, rows)` (as {@link gather}). An embedding stored in the
 * weight format of the head it is tied to.
 *
 * @param args the table, its scales, its format and shape, and the index
 * @returns a new Float32Array of length `index.length * cols`
 *
 * @example
 * ```ts
 * import { gatherQuantized } from "@xpu/ops/ops/gather";
 * import { packQ8 } from "@xpu/ops/ops/matvec";
 * const table = packQ8(new Int32Array([1, -2, 3, 4]), 2, 2); // codes [[1, -2], [3, 4]]
 * gatherQuantized({ format: "q8", table, scales: new Float32Array([0.5, 2]), index: new Int32Array([1, 0]), rows: 2, cols: 2 });
 * // [6, 8, 0.5, -1]
 * ```
 */
export function gatherQuantized(args: GatherQuantizedArgs): Float32Array {
  validateGatherQuantized(args);
  const { format, table, scales, index, rows, cols } = args;
  const codes = format === "q8" ? unpackQ8(table, rows, cols) : unpackQ4(table, rows, cols);
  const groups = quantizedRowWords(format, cols).scales;
  const out = new Float32Array(index.length * cols);
  for (const [n, row] of index.entries()) {
    if (row < 0 || row >= rows) continue;
    for (let c = 0; c < cols; c++) {
      const scale = format === "q8" ? scales[row] : scales[row * groups + Math.floor(c / Q4_GROUP)];
      out[n * cols + c] = codes[row * cols + c] * scale;
    }
  }
  return out;
}
