/**
 * Reference for ALiBi (arXiv:2108.12409), attention with linear biases: what correct means, in
 * plain TypeScript.
 *
 * `alibi({ H, L, S, queryOffset })` is the additive bias `[1, H, L, S]` for queries
 * `i = 0 .. L-1` against keys `j = 0 .. S-1`:
 *
 * ```
 * out[0, h, i, j] = m_h * (j - (i + queryOffset))
 * ```
 *
 * - The slopes `m_h` are the paper's own `get_slopes(n)`: for n a power of two, the geometric
 *   sequence starting at and with ratio `2^(-8/n)`; otherwise the slopes of the closest power of two
 *   below n, followed by every other slope of twice that power, up to n in all (so for n = 12 the
 *   sequence is not monotonic: the eight slopes of 8 heads, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5).
 * - The bias is the paper's relative form `m (j - i)`, not BLOOM's `m j`: the two give the same
 *   softmax (they differ by a constant per row) but not the same bias, and only the relative form
 *   is what the paper writes and what a caller adding it to other scores expects.
 * - It has exactly the shape of attention's additive float mask (`maskShape` `[1, H, L, S]`), so the
 *   two compose by addition; masking (causal or padding) is the caller's.
 * - `queryOffset` is where query 0 sits among the keys (S - L when the L queries are the last of S
 *   positions, as in decoding with a KV cache); default 0, as attention's `queryOffset`.
 *
 * The slope is computed in f64 and the bias rounded to f32 once.
 *
 * @module
 */

import { requireArgs, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["H", "L", "S", "queryOffset"];

/** Sizes of {@link alibi}. */
export interface AlibiShape {
  /** Attention heads, >= 1. */
  H: number;
  /** Query positions, >= 1. */
  L: number;
  /** Key positions, >= 1. */
  S: number;
  /** The key position of query 0; default 0. */
  queryOffset?: number;
}

/** Arguments of {@link alibi}: only sizes (there is no input tensor). */
export type AlibiArgs = AlibiShape;

/** The largest number of bias elements (H * L * S): what one u32-indexed binding holds. */
export const ALIBI_MAX_ELEMENTS = 2 ** 32 - 1;

/**
 * Validates {@link alibi}'s sizes.
 *
 * @param shape the sizes
 * @returns the query offset to use
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateAlibiShape } from "@xpu/ops/ops/alibi";
 * validateAlibiShape({ H: 8, L: 16, S: 32 }); // { queryOffset: 0 }: the default filled in
 * validateAlibiShape({ H: 8, L: 1, S: 32, queryOffset: 31 }); // a decode step's row
 * ```
 */
export function validateAlibiShape(shape: AlibiShape): { queryOffset: number } {
  requireArgs("alibi", "shape", shape, "{ H, L, S, queryOffset? }", KEYS);
  requireInt("alibi", "H", shape.H, 1, U32_MAX);
  requireInt("alibi", "L", shape.L, 1, 2 ** 24);
  requireInt("alibi", "S", shape.S, 1, 2 ** 24);
  // j - i - queryOffset must be exact in f32 for the kernel: all three below 2^24.
  const queryOffset = requireInt("alibi", "queryOffset", shape.queryOffset ?? 0, -(2 ** 24), 2 ** 24);
  const elements = shape.H * shape.L * shape.S;
  if (elements > ALIBI_MAX_ELEMENTS) {
    throw new Error(`alibi: H * L * S must be at most ${ALIBI_MAX_ELEMENTS}, got ${elements}`);
  }
  return { queryOffset };
}

/**
 * Validates {@link alibi}'s arguments (sizes only).
 *
 * @param args the arguments
 * @returns as {@link validateAlibiShape}
 *
 * @example
 * ```ts
 * import { validateAlibi } from "@xpu/ops/ops/alibi";
 * validateAlibi({ H: 4, L: 2, S: 2 }); // passes: alibi's arguments are its sizes
 * try {
 *   validateAlibi({ H: 4, L: 2, S: 2, offset: 1 } as never);
 * } catch (e) {
 *   (e as Error).message; // 'alibi: unknown argument "offset" (expected H, L, S, queryOffset)'
 * }
 * ```
 */
export function validateAlibi(args: AlibiArgs): { queryOffset: number } {
  requireArgs("alibi", "args", args, "{ H, L, S, queryOffset? }", KEYS);
  return validateAlibiShape(args);
}

/**
 * The paper's `get_slopes(n)`, in f64.
 *
 * @param H the number of heads, >= 1
 * @returns one slope per head
 *
 * @example
 * ```ts
 * import { alibiSlopes } from "@xpu/ops/ops/alibi";
 * alibiSlopes(8); // [0.5, 0.25, ..., 2^-8]
 * ```
 */
export function alibiSlopes(H: number): number[] {
  requireInt("alibi", "H", H, 1);
  const powerOfTwo = (n: number) => {
    const start = 2 ** -(2 ** -(Math.log2(n) - 3));
    return Array.from({ length: n }, (_, i) => start * start ** i);
  };
  if (Number.isInteger(Math.log2(H))) return powerOfTwo(H);
  const closest = 2 ** Math.floor(Math.log2(H));
  return [...powerOfTwo(closest), ...alibiSlopes(2 * closest).filter((_, i) => i % 2 === 0).slice(0, H - closest)];
}

/**
 * The ALiBi bias `[1, H, L, S]` (see the module doc).
 *
 * @param args H, L, S and the query offset
 * @returns a new Float32Array of length H * L * S
 *
 * @example
 * ```ts
 * import { alibi } from "@xpu/ops/ops/alibi";
 * alibi({ H: 1, L: 2, S: 2 }); // m = 2^-8: [0, m, -m, 0]
 * ```
 */
export function alibi(args: AlibiArgs): Float32Array {
  const { queryOffset } = validateAlibi(args);
  const { H, L, S } = args;
  const slopes = alibiSlopes(H);
  const out = new Float32Array(H * L * S);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < L; i++) {
      for (let j = 0; j < S; j++) out[(h * L + i) * S + j] = slopes[h] * (j - (i + queryOffset));
    }
  }
  return out;
}
