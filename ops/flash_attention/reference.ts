/**
 * Reference for flash_attention: the same function as ops/attention (torch 2.11's
 * `F.scaled_dot_product_attention`, every convention of `attention` included: 1/sqrt(D) scale,
 * upper-left `causal` with `queryOffset`, the additive `mask` broadcast by `maskShape`, zeros for a
 * fully masked row), computed the same way in f64. What differs is the kernel (one dispatch, online
 * softmax) and therefore one extra refusal: D and Dv must be multiples of 4, because the kernel reads
 * and writes every row as vec4s (every head dim in use, 64, 80, 96, 112, 128, 256, 512, is one;
 * ops/attention takes any D).
 *
 * One addition: `layout`. `"BHLD"` (the default) is attention's heads-first q `[B, H, L, D]`, k
 * `[B, kvHeads, S, D]`, v `[B, kvHeads, S, Dv]`, out `[B, H, L, Dv]`; `"BLHD"` is token-major, as a
 * Linear layer writes them (each token's heads contiguous): q `[B, L, H, D]`, k `[B, S, kvHeads, D]`,
 * v `[B, S, kvHeads, Dv]`, out `[B, L, H, Dv]`, i.e. torch's `sdpa(q.transpose(1, 2), k.transpose(1, 2),
 * v.transpose(1, 2)).transpose(1, 2)`. The mask keeps its logical `[mB, mH, mL, S]` shape in either
 * layout. This reference permutes token-major arrays to heads-first, computes, and permutes back.
 *
 * @module
 */

import {
  ATTENTION_KEYS,
  ATTENTION_SHAPE_FIELDS,
  type AttentionArgs,
  attentionOf,
  type AttentionShape,
  checkAttentionArrays,
  checkAttentionShape,
  type ResolvedAttentionShape,
} from "../attention/reference.ts";
import { requireArgs, requireOneOf } from "../validate.ts";

export { keyPaddingBias } from "../attention/reference.ts";
export type { ResolvedAttentionShape } from "../attention/reference.ts";

/**
 * Memory layout of q, k, v and the output: `"BHLD"` heads-first (`[B, H, L, D]`, attention's), or
 * `"BLHD"` token-major (`[B, L, H, D]`, each token's heads contiguous, as a Linear layer writes them).
 */
export type AttentionLayout = "BHLD" | "BLHD";

/** The keys a shape or arguments object may carry: attention's and the layout. */
const KEYS: readonly string[] = [...ATTENTION_KEYS, "layout"];

/** The layouts, in the order messages list them. */
export const ATTENTION_LAYOUTS: readonly AttentionLayout[] = ["BHLD", "BLHD"];

/** Sizes and scalars of {@link flashAttention}: attention's, and the layout. */
export interface FlashAttentionShape extends AttentionShape {
  /** Layout of q, k, v and the output (default `"BHLD"`). */
  layout?: AttentionLayout;
}

/** Arguments of {@link flashAttention}: attention's, and the layout. */
export interface FlashAttentionArgs extends AttentionArgs {
  /** Layout of q, k, v and the output (default `"BHLD"`). */
  layout?: AttentionLayout;
}

/** A flash_attention (or gqa) shape with every default filled in, the layout included. */
export interface ResolvedFlashShape extends ResolvedAttentionShape {
  /** Layout of q, k, v and the output. */
  layout: AttentionLayout;
}

/**
 * Checks a layout argument.
 *
 * @param op the op, for messages
 * @param layout the value given (undefined: the default, `"BHLD"`)
 * @returns the layout
 * @throws Error naming `layout` and the layouts there are
 *
 * @example
 * ```ts
 * import { requireLayout } from "@xpu/ops/ops/flash_attention";
 * requireLayout("flashAttention", undefined); // "BHLD"
 * requireLayout("flashAttention", "BLHD"); // "BLHD"; "BSHD" throws, naming the layouts there are
 * ```
 */
export function requireLayout(op: string, layout: unknown): AttentionLayout {
  return layout === undefined ? "BHLD" : requireOneOf(op, "layout", layout, ATTENTION_LAYOUTS);
}

/**
 * Swaps the two middle axes of a row-major `[n, a, b, x]` array: `[B, L, H, D]` to `[B, H, L, D]` and back.
 *
 * @param values the array
 * @param n the outer size
 * @param a the first middle axis
 * @param b the second middle axis
 * @param x the inner size
 * @returns a new `[n, b, a, x]` array
 *
 * @example
 * ```ts
 * import { swapMiddleAxes } from "@xpu/ops/ops/flash_attention";
 * // [1, 2, 3, 1] to [1, 3, 2, 1]: element (p, r) moves to (r, p).
 * swapMiddleAxes(new Float32Array([0, 1, 2, 3, 4, 5]), 1, 2, 3, 1); // [0, 3, 1, 4, 2, 5]
 * ```
 */
export function swapMiddleAxes(values: Float32Array, n: number, a: number, b: number, x: number): Float32Array {
  const out = new Float32Array(values.length);
  for (let i = 0; i < n; i++) {
    for (let p = 0; p < a; p++) {
      for (let r = 0; r < b; r++) {
        const from = ((i * a + p) * b + r) * x;
        out.set(values.subarray(from, from + x), ((i * b + r) * a + p) * x);
      }
    }
  }
  return out;
}

/**
 * Attention in either layout on validated arguments: token-major q, k and v are permuted to
 * heads-first, {@link attentionOf} computes, and the output is permuted back. Shared by flashAttention
 * and gqa.
 *
 * @param args the arrays
 * @param shape the validated shape, with its layout
 * @returns the output, `[B, H, L, Dv]` or `[B, L, H, Dv]`
 *
 * @example
 * ```ts
 * import { attentionInLayout, validateFlashAttention } from "@xpu/ops/ops/flash_attention";
 * // Two heads of one token, token-major: each query sees only its own head's key and value.
 * const args = {
 *   q: new Float32Array(8).fill(1),
 *   k: new Float32Array(8).fill(1),
 *   v: new Float32Array([1, 1, 1, 1, 2, 2, 2, 2]),
 *   B: 1, H: 2, L: 1, S: 1, D: 4, layout: "BLHD" as const,
 * };
 * attentionInLayout(args, validateFlashAttention(args)); // [1, 1, 1, 1, 2, 2, 2, 2]
 * ```
 */
export function attentionInLayout(args: AttentionArgs, shape: ResolvedFlashShape): Float32Array {
  if (shape.layout === "BHLD") return attentionOf(args, shape);
  const { B, H, kvHeads, L, S, D, Dv } = shape;
  const headsFirst = {
    ...args,
    q: swapMiddleAxes(args.q, B, L, H, D),
    k: swapMiddleAxes(args.k, B, S, kvHeads, D),
    v: swapMiddleAxes(args.v, B, S, kvHeads, Dv),
  };
  return swapMiddleAxes(attentionOf(headsFirst, shape), B, H, L, Dv);
}

/**
 * Checks that the head dims are multiples of 4, as the vec4 kernels need.
 *
 * @param op the op, for messages
 * @param shape the resolved shape
 * @throws Error naming D or Dv
 *
 * @example
 * ```ts
 * import { validateAttentionShape } from "@xpu/ops/ops/attention";
 * import { requireQuadDims } from "@xpu/ops/ops/flash_attention";
 * requireQuadDims("flashAttention", validateAttentionShape({ B: 1, H: 1, L: 2, S: 2, D: 64 })); // passes
 * try {
 *   requireQuadDims("flashAttention", validateAttentionShape({ B: 1, H: 1, L: 2, S: 2, D: 6 }));
 * } catch (e) {
 *   (e as Error).message; // "flashAttention: D must be a multiple of 4 (the kernel reads rows as vec4s; ops/attention takes any), got 6"
 * }
 * ```
 */
export function requireQuadDims(op: string, shape: ResolvedAttentionShape): void {
  for (const [name, value] of [["D", shape.D], ["Dv", shape.Dv]] as const) {
    if (value % 4 !== 0) {
      throw new Error(
        `${op}: ${name} must be a multiple of 4 (the kernel reads rows as vec4s; ops/attention takes any), got ${value}`,
      );
    }
  }
}

/**
 * Validates {@link flashAttention}'s sizes and scalars.
 *
 * @param shape the sizes and scalars
 * @param hasMask whether a mask accompanies them (default: whether maskShape is given)
 * @returns the shape with its defaults
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateFlashAttentionShape } from "@xpu/ops/ops/flash_attention";
 * validateFlashAttentionShape({ B: 1, H: 8, L: 64, S: 64, D: 64, layout: "BLHD" }); // Dv 64, scale 0.125, kvHeads 8, layout "BLHD"
 * ```
 */
export function validateFlashAttentionShape(shape: FlashAttentionShape, hasMask?: boolean): ResolvedFlashShape {
  requireArgs("flashAttention", "shape", shape, `{ ${ATTENTION_SHAPE_FIELDS}, layout? }`, KEYS);
  const resolved = checkAttentionShape("flashAttention", shape, shape.H, hasMask ?? shape.maskShape !== undefined);
  requireQuadDims("flashAttention", resolved);
  return { ...resolved, layout: requireLayout("flashAttention", shape.layout) };
}

/**
 * Validates {@link flashAttention}'s arguments.
 *
 * @param args the arguments
 * @returns the shape with its defaults
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateFlashAttention } from "@xpu/ops/ops/flash_attention";
 * const q = new Float32Array(8), k = new Float32Array(12), v = new Float32Array(12);
 * validateFlashAttention({ q, k, v, B: 1, H: 1, L: 2, S: 3, D: 4 }).scale; // 0.5: 1 / sqrt(D)
 * ```
 */
export function validateFlashAttention(args: FlashAttentionArgs): ResolvedFlashShape {
  requireArgs("flashAttention", "args", args, `{ q, k, v, mask?, ${ATTENTION_SHAPE_FIELDS}, layout? }`, KEYS);
  const shape = validateFlashAttentionShape(args, args.mask !== undefined);
  checkAttentionArrays("flashAttention", args, shape);
  return shape;
}

/**
 * Scaled dot-product attention (the definition flash_attention's kernel is held to).
 *
 * @param args q, k, v, the optional additive mask, the shape and the layout
 * @returns the output, `[B, H, L, Dv]` (`[B, L, H, Dv]` with layout `"BLHD"`)
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { flashAttention } from "@xpu/ops/ops/flash_attention";
 * const out = flashAttention({
 *   q: new Float32Array([1, 0, 0, 0]),
 *   k: new Float32Array([1, 0, 0, 0, 1, 0, 0, 0]),
 *   v: new Float32Array([2, 0, 0, 0, 4, 0, 0, 0]),
 *   B: 1, H: 1, L: 1, S: 2, D: 4,
 * });
 * out[0]; // 3: two keys with equal scores
 * ```
 */
export function flashAttention(args: FlashAttentionArgs): Float32Array {
  return attentionInLayout(args, validateFlashAttention(args));
}
