/**
 * Reference for scatter: indexed accumulation, what correct means, in plain TypeScript.
 *
 * `scatter` matches `torch.zeros(N, D).scatter_add_(1, index, src)`: `src` and `index` are
 * `[N, K]`, and `src[n, k]` is added to `out[n, index[n, k]]`, so the result is `[N, D]`.
 *
 * Conventions, each a departure from torch or a choice torch leaves open:
 * - Colliding indices accumulate. It is `scatter_add_`, not `scatter_`: a "last write wins" rule
 *   is, on a GPU, whichever write the hardware happened to order last, which is no rule at all;
 *   a sum is the same for every order of the writes, up to f32 rounding.
 * - `self` is implicitly zero: the op returns the scattered sums, not an update of a tensor.
 * - An index outside `[0, D)` (negative, or `>= D`) is dropped: its value is added nowhere. torch
 *   raises; a kernel cannot. `-1` is dropped too, not read as Python's "last column".
 * - `index` is i32 (`Int32Array`), because WGSL has no 64-bit integer; so `D` is at most 2^31 - 1.
 * - `N = 0` and `K = 0` are allowed, as in torch; `K = 0` gives all zeros.
 *
 * The sums are taken in f64 and rounded to f32 once. A GPU adds in f32 in whatever order its
 * atomics land, so it agrees within the rounding of an f32 sum of that many terms, not exactly.
 *
 * @module
 */

import { requireArray, requireInt } from "../validate.ts";

/** The largest column count an i32 index can address. */
export const MAX_COLUMNS = 2 ** 31 - 1;

/** Arguments of {@link scatter}. */
export interface ScatterArgs {
  /** Values to add, `[N, K]` row-major. */
  src: Float32Array;
  /** Target column of each value, `[N, K]`; one outside `[0, D)` is dropped. */
  index: Int32Array;
  /** Rows of `src`, `index` and the output. */
  N: number;
  /** Columns of `src` and `index`: values per row. */
  K: number;
  /** Columns of the output, in `[1, 2^31 - 1]`. */
  D: number;
}

/**
 * Validates {@link scatter}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 */
export function validateScatter(args: ScatterArgs): void {
  const name = "scatter";
  requireInt(name, "N", args.N, 0);
  requireInt(name, "K", args.K, 0);
  requireInt(name, "D", args.D, 1, MAX_COLUMNS);
  requireArray(name, "src", args.src, "Float32Array", [args.N * args.K, "N * K"]);
  requireArray(name, "index", args.index, "Int32Array", [args.N * args.K, "N * K"]);
}

/**
 * Adds each `src[n, k]` into column `index[n, k]` of output row `n`, starting from zeros;
 * colliding indices accumulate and an index outside `[0, D)` is dropped.
 *
 * @param args the values, their target columns and the shapes `N`, `K`, `D`
 * @returns a new Float32Array of length `N * D`
 *
 * @example
 * ```ts
 * import { scatter } from "./reference.ts";
 * const src = new Float32Array([1, 2, 4, 8]);
 * scatter({ src, index: new Int32Array([0, 0, 2, -1]), N: 1, K: 4, D: 3 }); // [3, 0, 4]
 * ```
 */
export function scatter(args: ScatterArgs): Float32Array {
  validateScatter(args);
  const { src, index, N, K, D } = args;
  const sums = new Float64Array(N * D);
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < K; k++) {
      const column = index[n * K + k];
      if (column >= 0 && column < D) sums[n * D + column] += src[n * K + k];
    }
  }
  return Float32Array.from(sums);
}
