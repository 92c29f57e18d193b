/**
 * Reference for flash_attention: the same function as ops/attention (torch 2.11's
 * `F.scaled_dot_product_attention`, every convention of `attention` included: 1/sqrt(D) scale,
 * upper-left `causal` with `queryOffset`, the additive `mask` broadcast by `maskShape`, zeros for a
 * fully masked row), computed the same way in f64. What differs is the kernel (one dispatch, online
 * softmax) and therefore one extra refusal: D and Dv must be multiples of 4, because the kernel reads
 * and writes every row as vec4s (every head dim in use, 64, 80, 96, 112, 128, 256, is one;
 * ops/attention takes any D).
 *
 * @module
 */

import {
  ATTENTION_SHAPE_FIELDS,
  type AttentionArgs,
  attentionOf,
  type AttentionShape,
  checkAttentionArrays,
  checkAttentionShape,
  type ResolvedAttentionShape,
} from "../attention/reference.ts";
import { requireArgs } from "../validate.ts";

export { keyPaddingBias } from "../attention/reference.ts";
export type { ResolvedAttentionShape } from "../attention/reference.ts";

/** Sizes and scalars of {@link flashAttention}: those of attention. */
export type FlashAttentionShape = AttentionShape;
/** Arguments of {@link flashAttention}: those of attention. */
export type FlashAttentionArgs = AttentionArgs;

/**
 * Checks that the head dims are multiples of 4, as the vec4 kernels need.
 *
 * @param op the op, for messages
 * @param shape the resolved shape
 * @throws Error naming D or Dv
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
 */
export function validateFlashAttentionShape(shape: FlashAttentionShape, hasMask?: boolean): ResolvedAttentionShape {
  requireArgs("flashAttention", "shape", shape, `{ ${ATTENTION_SHAPE_FIELDS} }`);
  const resolved = checkAttentionShape("flashAttention", shape, shape.H, hasMask ?? shape.maskShape !== undefined);
  requireQuadDims("flashAttention", resolved);
  return resolved;
}

/**
 * Validates {@link flashAttention}'s arguments.
 *
 * @param args the arguments
 * @returns the shape with its defaults
 * @throws Error naming the bad argument and what was expected
 */
export function validateFlashAttention(args: FlashAttentionArgs): ResolvedAttentionShape {
  requireArgs("flashAttention", "args", args, `{ q, k, v, mask?, ${ATTENTION_SHAPE_FIELDS} }`);
  const shape = validateFlashAttentionShape(args, args.mask !== undefined);
  checkAttentionArrays("flashAttention", args, shape);
  return shape;
}

/**
 * Scaled dot-product attention (the definition flash_attention's kernel is held to).
 *
 * @param args q, k, v, the optional additive mask, and the shape
 * @returns the output, `[B, H, L, Dv]`
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
  return attentionOf(args, validateFlashAttention(args));
}
