/**
 * Reference for grouped-query attention: what correct means, in plain TypeScript.
 *
 * `gqa(args)` is attention (torch 2.11's `F.scaled_dot_product_attention`, every convention of
 * ops/attention included) with `kvHeads` KV heads shared by the `H` query heads:
 * `F.scaled_dot_product_attention(q, k, v, ..., enable_gqa=True)` with `q` `[B, H, L, D]`, `k`
 * `[B, kvHeads, S, D]`, `v` `[B, kvHeads, S, Dv]`. Query head h reads KV head `floor(h / (H / kvHeads))`:
 * contiguous groups, as torch's `repeat_interleave` of the KV heads, not `h % kvHeads` (a tiled
 * repeat). kvHeads = 1 is multi-query attention, kvHeads = H plain attention. H not a multiple of
 * kvHeads is refused rather than guessing a grouping. A mask's head axis (`maskShape[1]`) counts query
 * heads (1 or H), as torch's attn_mask does.
 *
 * The GPU paths read rows as vec4s, so D and Dv must be multiples of 4 (as flash_attention). `layout`
 * is flash_attention's: `"BHLD"` (default) as above, or `"BLHD"` token-major: q `[B, L, H, D]`, k
 * `[B, S, kvHeads, D]`, v `[B, S, kvHeads, Dv]`, out `[B, L, H, Dv]`.
 *
 * {@link kvCacheBytes} is what the grouping buys: the bytes of a KV cache.
 *
 * @module
 */

import {
  ATTENTION_KEYS,
  ATTENTION_SHAPE_FIELDS,
  checkAttentionArrays,
  checkAttentionShape,
} from "../attention/reference.ts";
import {
  attentionInLayout,
  type FlashAttentionArgs,
  type FlashAttentionShape,
  requireLayout,
  requireQuadDims,
  type ResolvedFlashShape,
} from "../flash_attention/reference.ts";
import { requireArgs, requireInt } from "../validate.ts";

export { keyPaddingBias } from "../attention/reference.ts";
export type { ResolvedAttentionShape } from "../attention/reference.ts";
export type { AttentionLayout, ResolvedFlashShape } from "../flash_attention/reference.ts";

/** The keys a shape or arguments object may carry: attention's, kvHeads and the layout. */
const KEYS: readonly string[] = [...ATTENTION_KEYS, "kvHeads", "layout"];

/** Sizes and scalars of {@link gqa}: flash_attention's (attention's and the layout), and the number of KV heads. */
export interface GqaShape extends FlashAttentionShape {
  /** KV heads; H must be a multiple of it (1 = MQA, H = MHA). */
  kvHeads: number;
}

/** Arguments of {@link gqa}: k and v have kvHeads heads. */
export interface GqaArgs extends FlashAttentionArgs {
  /** KV heads; H must be a multiple of it (1 = MQA, H = MHA). */
  kvHeads: number;
}

/**
 * Validates {@link gqa}'s sizes and scalars.
 *
 * @param shape the sizes and scalars
 * @param hasMask whether a mask accompanies them (default: whether maskShape is given)
 * @returns the shape with its defaults
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateGqaShape } from "@xpu/ops/ops/gqa";
 * validateGqaShape({ B: 1, H: 32, kvHeads: 8, L: 1, S: 4096, D: 128 }); // Dv 128, scale 1 / sqrt(128), layout "BHLD"
 * ```
 */
export function validateGqaShape(shape: GqaShape, hasMask?: boolean): ResolvedFlashShape {
  requireArgs("gqa", "shape", shape, `{ kvHeads, ${ATTENTION_SHAPE_FIELDS}, layout? }`, KEYS);
  const resolved = checkAttentionShape("gqa", shape, shape.kvHeads, hasMask ?? shape.maskShape !== undefined);
  requireQuadDims("gqa", resolved);
  return { ...resolved, layout: requireLayout("gqa", shape.layout) };
}

/**
 * Validates {@link gqa}'s arguments.
 *
 * @param args the arguments
 * @returns the shape with its defaults
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateGqa } from "@xpu/ops/ops/gqa";
 * const q = new Float32Array(8), k = new Float32Array(12), v = new Float32Array(12); // k and v: one KV head
 * validateGqa({ q, k, v, B: 1, H: 2, kvHeads: 1, L: 1, S: 3, D: 4 }).kvHeads; // 1; k of 24 (two KV heads) throws
 * ```
 */
export function validateGqa(args: GqaArgs): ResolvedFlashShape {
  requireArgs("gqa", "args", args, `{ q, k, v, mask?, kvHeads, ${ATTENTION_SHAPE_FIELDS}, layout? }`, KEYS);
  const shape = validateGqaShape(args, args.mask !== undefined);
  checkAttentionArrays("gqa", args, shape, "kvHeads");
  return shape;
}

/**
 * Grouped-query attention, `F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal,
 * scale=scale, enable_gqa=True)`.
 *
 * @param args q, k and v (k and v with kvHeads heads), the optional additive mask, the shape and the layout
 * @returns the output, `[B, H, L, Dv]` (`[B, L, H, Dv]` with layout `"BLHD"`)
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { gqa } from "@xpu/ops/ops/gqa";
 * // Two query heads share one KV head (MQA): both average the same two values.
 * const out = gqa({
 *   q: new Float32Array(8), // [1, 2, 1, 4], zeros: equal scores
 *   k: new Float32Array(8), // [1, 1, 2, 4]
 *   v: new Float32Array([2, 0, 0, 0, 4, 0, 0, 0]),
 *   B: 1, H: 2, kvHeads: 1, L: 1, S: 2, D: 4,
 * });
 * [out[0], out[4]]; // [3, 3]
 * ```
 */
export function gqa(args: GqaArgs): Float32Array {
  return attentionInLayout(args, validateGqa(args));
}

/** Arguments of {@link kvCacheBytes}. */
export interface KvCacheSize {
  /** Batch (default 1). */
  B?: number;
  /** KV heads. */
  kvHeads: number;
  /** Cached positions. */
  S: number;
  /** Head dim of k. */
  D: number;
  /** Head dim of v (default D). */
  Dv?: number;
  /** Decoder layers (default 1). */
  layers?: number;
  /** Bytes per element (default 4, f32). */
  bytesPerElement?: number;
}

/**
 * Bytes of a KV cache: `layers * B * kvHeads * S * (D + Dv) * bytesPerElement`. One Llama-3-8B decoder
 * layer (B = 1, S = 8192, D = Dv = 128, f32) caches 268,435,456 bytes with 32 KV heads, 67,108,864 with
 * 8 (what the model uses) and 8,388,608 with 1; over its 32 layers, 8 KV heads instead of 32 save
 * 6,442,450,944 bytes.
 *
 * @param size the cache's dimensions
 * @returns the bytes
 * @throws Error naming a dimension that is not an integer >= 1
 *
 * @example
 * ```ts
 * import { kvCacheBytes } from "@xpu/ops/ops/gqa";
 * kvCacheBytes({ kvHeads: 8, S: 8192, D: 128 }); // 67108864
 * ```
 */
export function kvCacheBytes(size: KvCacheSize): number {
  const B = requireInt("kvCacheBytes", "B", size.B ?? 1, 1);
  const kvHeads = requireInt("kvCacheBytes", "kvHeads", size.kvHeads, 1);
  const S = requireInt("kvCacheBytes", "S", size.S, 1);
  const D = requireInt("kvCacheBytes", "D", size.D, 1);
  const Dv = requireInt("kvCacheBytes", "Dv", size.Dv ?? D, 1);
  const layers = requireInt("kvCacheBytes", "layers", size.layers ?? 1, 1);
  const bytes = requireInt("kvCacheBytes", "bytesPerElement", size.bytesPerElement ?? 4, 1);
  return layers * B * kvHeads * S * (D + Dv) * bytes;
}
