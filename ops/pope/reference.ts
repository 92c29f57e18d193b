/**
 * Reference for PoPE (arXiv:2405.04585, Eq. 14): the Legendre polynomial position table, in plain
 * TypeScript.
 *
 * `pope({ S, D, posOffset })` is the table `[S, D]` added to the embeddings of positions
 * `0 .. S-1`:
 *
 * ```
 * out[s, d] = P_(s + posOffset)(x_d),    x_d = f32(-1 + 2d / D)
 * ```
 *
 * - The polynomial's order is the position and its argument sweeps `[-1, 1)` across the embedding
 *   dimension (D points from -1, step 2/D, 1 itself excluded). Reading it the other way round (order
 *   from the dimension, argument from the position) is a different table; the tests pin this one.
 * - `posOffset` is required: the paper does not say whether the first position is order 0 or 1,
 *   and P_0 = 1 everywhere (a constant row) makes the choice visible. It is also how a decode step
 *   asks for the row of position `posOffset` alone (S = 1).
 * - x_d is rounded to f32 first (the GPU binds the same f32 values), since P_n(x) is steep near
 *   x = ±1 (P_n'(1) = n(n+1)/2): a rounding of x would otherwise dominate the comparison.
 *
 * P_n is evaluated by Bonnet's recurrence, (n + 1) P_(n+1) = (2n + 1) x P_n - n P_(n-1), from P_0 = 1
 * and P_1 = x, in f64 (the forward recurrence is stable on [-1, 1]), and rounded to f32 once.
 *
 * @module
 */

import { requireArgs, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["S", "D", "posOffset"];

/** Sizes of {@link pope}. */
export interface PopeShape {
  /** Positions (rows), >= 1. */
  S: number;
  /** Embedding dimension (columns), >= 1. */
  D: number;
  /** The order of row 0 (the first position's polynomial order). Required: 0 or 1 in the paper's sense. */
  posOffset: number;
}

/** Arguments of {@link pope}: only sizes (there is no input tensor). */
export type PopeArgs = PopeShape;

/**
 * Validates {@link pope}'s sizes.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validatePopeShape } from "@xpu/ops/ops/pope";
 * validatePopeShape({ S: 4, D: 8, posOffset: 1 }); // passes; posOffset has no default
 * ```
 */
export function validatePopeShape(shape: PopeShape): void {
  requireArgs("pope", "shape", shape, "{ S, D, posOffset }", KEYS);
  requireInt("pope", "S", shape.S, 1, U32_MAX);
  requireInt("pope", "D", shape.D, 1, U32_MAX);
  if (shape.posOffset === undefined) {
    throw new Error("pope: posOffset is required (the paper does not say whether positions start at order 0 or 1)");
  }
  requireInt("pope", "posOffset", shape.posOffset, 0, 2 ** 24);
  if (shape.S + shape.posOffset > 2 ** 24) {
    throw new Error(`pope: S + posOffset must be at most 2^24 (orders exact in f32), got ${shape.S + shape.posOffset}`);
  }
}

/**
 * Validates {@link pope}'s arguments (sizes only).
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validatePope } from "@xpu/ops/ops/pope";
 * validatePope({ S: 2, D: 4, posOffset: 1 }); // passes
 * ```
 */
export function validatePope(args: PopeArgs): void {
  requireArgs("pope", "args", args, "{ S, D, posOffset }", KEYS);
  validatePopeShape(args);
}

/**
 * The arguments x_d = f32(-1 + 2d / D) of the table's columns.
 *
 * @param D the embedding dimension
 * @returns D f32 values from -1 up to 1 - 2/D
 *
 * @example
 * ```ts
 * import { popeArguments } from "@xpu/ops/ops/pope";
 * popeArguments(4); // [-1, -0.5, 0, 0.5]
 * ```
 */
export function popeArguments(D: number): Float32Array {
  requireInt("pope", "D", D, 1);
  return Float32Array.from({ length: D }, (_, d) => -1 + (2 * d) / D);
}

/**
 * The PoPE table `[S, D]` (see the module doc).
 *
 * @param args S, D and posOffset
 * @returns a new Float32Array of length S * D
 *
 * @example
 * ```ts
 * import { pope } from "@xpu/ops/ops/pope";
 * // Orders 1 and 2 at x = -1, -0.5, 0, 0.5: P_1 = x, P_2 = (3x^2 - 1) / 2.
 * pope({ S: 2, D: 4, posOffset: 1 }); // [-1, -0.5, 0, 0.5, 1, -0.125, -0.5, -0.125]
 * ```
 */
export function pope(args: PopeArgs): Float32Array {
  validatePope(args);
  const { S, D, posOffset } = args;
  const x = popeArguments(D);
  const out = new Float32Array(S * D);
  for (let d = 0; d < D; d++) {
    let previous = 0; // P_(n-1), with P_(-1) = 0
    let current = 1; // P_n, from n = 0
    for (let n = 0; n < posOffset + S; n++) {
      if (n >= posOffset) out[(n - posOffset) * D + d] = current;
      const next = ((2 * n + 1) * x[d] * current - n * previous) / (n + 1);
      previous = current;
      current = next;
    }
  }
  return out;
}
