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
import { requireArgs, requireArray, requireF32, requireInt, U32_MAX } from "../validate.ts";

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

/** The largest head size {@link gqaCache}'s kernels hold in workgroup memory. */
export const CACHE_MAX_HEAD_DIM = 256;

/**
 * Every key of {@link gqaCache}'s arguments (its shape's among them, and the plans' `splits` and
 * `positions`).
 */
const CACHE_KEYS: readonly string[] = [
  "qkv",
  "table",
  "keys",
  "values",
  "pos0",
  "H",
  "kvHeads",
  "D",
  "maxSeq",
  "L",
  "scale",
  "splits",
  "positions",
  "chunk",
];

/** Sizes of a call on a KV cache ({@link gqaCache}). */
export interface GqaCacheShape {
  /** Query heads, a multiple of kvHeads. */
  H: number;
  /** KV heads. */
  kvHeads: number;
  /** Head size, a multiple of 4, at most {@link CACHE_MAX_HEAD_DIM}. */
  D: number;
  /** Positions the cache holds. */
  maxSeq: number;
  /** Rows (positions) of the call, >= 1. */
  L: number;
  /** Scores' scale; default 1 / sqrt(D). A finite f32. */
  scale?: number;
  /**
   * Positions the kernels score at once, 1 to 1,024 (default): fewer only to test the online softmax
   * across chunks (the reference has no chunks).
   */
  chunk?: number;
}

/** Arguments of {@link gqaCache}. */
export interface GqaCacheArgs extends GqaCacheShape {
  /** The call's fused projections `[L, (H + 2 * kvHeads) * D]`: each row `[q | k | v]`. */
  qkv: Float32Array;
  /** RoPE's (cos, sin) per position and pair: `[maxSeq, D / 2, 2]`. */
  table: Float32Array;
  /** The key cache `[kvHeads, maxSeq, D]`, its positions before pos0 filled by earlier calls. */
  keys: Float32Array;
  /** The value cache, as keys. */
  values: Float32Array;
  /** The position of the call's first row; `pos0 + L <= maxSeq`. */
  pos0: number;
}

/**
 * Validates {@link gqaCache}'s sizes.
 *
 * @param shape the sizes
 * @returns the scale to use
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateGqaCacheShape } from "@xpu/ops/ops/gqa";
 * validateGqaCacheShape({ H: 16, kvHeads: 8, D: 112, maxSeq: 768, L: 1 }); // 1 / sqrt(112)
 * ```
 */
export function validateGqaCacheShape(shape: GqaCacheShape): number {
  const op = "gqaCache";
  requireArgs(op, "shape", shape, "{ H, kvHeads, D, maxSeq, L, scale? }", CACHE_KEYS);
  const kvHeads = requireInt(op, "kvHeads", shape.kvHeads, 1, U32_MAX);
  const H = requireInt(op, "H", shape.H, 1, U32_MAX);
  if (H % kvHeads !== 0) throw new Error(`${op}: H (${H}) must be a multiple of kvHeads (${kvHeads})`);
  const D = requireInt(op, "D", shape.D, 4, CACHE_MAX_HEAD_DIM);
  if (D % 4 !== 0) throw new Error(`${op}: D must be a multiple of 4 (rows are read as vec4s), got ${D}`);
  requireInt(op, "maxSeq", shape.maxSeq, 1, U32_MAX);
  requireInt(op, "L", shape.L, 1, shape.maxSeq);
  if (shape.chunk !== undefined) requireInt(op, "chunk", shape.chunk, 1, 1024);
  return shape.scale === undefined ? 1 / Math.sqrt(D) : requireF32(op, "scale", shape.scale);
}

/**
 * Validates {@link gqaCache}'s arguments: the sizes, then the arrays and pos0.
 *
 * @param args the arguments
 * @returns the scale to use
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateGqaCache } from "@xpu/ops/ops/gqa";
 * const [H, kvHeads, D, maxSeq, L] = [2, 1, 4, 3, 1];
 * validateGqaCache({
 *   H, kvHeads, D, maxSeq, L, pos0: 2,
 *   qkv: new Float32Array((H + 2 * kvHeads) * D), table: new Float32Array(maxSeq * D),
 *   keys: new Float32Array(kvHeads * maxSeq * D), values: new Float32Array(kvHeads * maxSeq * D),
 * }); // 0.5
 * ```
 */
export function validateGqaCache(args: GqaCacheArgs): number {
  const op = "gqaCache";
  requireArgs(op, "args", args, "{ qkv, table, keys, values, pos0, H, kvHeads, D, maxSeq, L, scale? }", CACHE_KEYS);
  const scale = validateGqaCacheShape(args);
  const { H, kvHeads, D, maxSeq, L } = args;
  requireInt(op, "pos0", args.pos0, 0, maxSeq - L);
  requireArray(op, "qkv", args.qkv, "Float32Array", [L * (H + 2 * kvHeads) * D, "L * (H + 2 * kvHeads) * D"]);
  requireArray(op, "table", args.table, "Float32Array", [maxSeq * D, "maxSeq * D"]);
  for (const name of ["keys", "values"] as const) {
    requireArray(op, name, args[name], "Float32Array", [kvHeads * maxSeq * D, "kvHeads * maxSeq * D"]);
  }
  return scale;
}

/**
 * Attention of a call's rows over a KV cache, as a decoder layer runs it: row r (position
 * `p = pos0 + r`) of the fused projections `qkv` gives its query heads and its key and value; query
 * and key are rotated by RoPE in adjacent pairs (`[a, b]` at pair j becomes `[a cos - b sin,
 * b cos + a sin]` with the table's (cos, sin) of (p, j): transformers' rotate_half on weights whose
 * Q/K rows were permuted to pairs, as the Llama engine loads them), the key and value are written into
 * the caches at p, and each query head h attends over positions `0 ..= p` of KV head
 * `h / (H / kvHeads)` (causal over the cache: `F.scaled_dot_product_attention(q, k[:p + 1], v[:p + 1],
 * enable_gqa=True)` per row). In f64; the cache is written as f32.
 *
 * @param args the projections, the RoPE table, the caches, pos0 and the sizes
 * @returns `out` `[L, H, D]`, and the caches with the call's positions written
 * @throws Error naming the bad argument, as {@link validateGqaCache}
 *
 * @example
 * ```ts
 * import { gqaCache } from "@xpu/ops/ops/gqa";
 * // One head of 4, the first position (cos 1, sin 0: no rotation): the output is the value.
 * const { out } = gqaCache({
 *   H: 1, kvHeads: 1, D: 4, maxSeq: 1, L: 1, pos0: 0,
 *   qkv: new Float32Array([1, 0, 0, 0, 1, 0, 0, 0, 5, 6, 7, 8]), table: new Float32Array([1, 0, 1, 0]),
 *   keys: new Float32Array(4), values: new Float32Array(4),
 * });
 * out; // [5, 6, 7, 8]
 * ```
 */
export function gqaCache(args: GqaCacheArgs): { out: Float32Array; keys: Float32Array; values: Float32Array } {
  const scale = validateGqaCache(args);
  const { H, kvHeads, D, maxSeq, L, pos0, qkv, table } = args;
  const keys = Float32Array.from(args.keys);
  const values = Float32Array.from(args.values);
  const width = (H + 2 * kvHeads) * D;
  const half = D / 2;
  const rotate = (src: number, p: number): number[] => {
    const y = new Array<number>(D);
    for (let j = 0; j < half; j++) {
      const [c, s] = [table[2 * (p * half + j)], table[2 * (p * half + j) + 1]];
      const [a, b] = [qkv[src + 2 * j], qkv[src + 2 * j + 1]];
      y[2 * j] = a * c - b * s;
      y[2 * j + 1] = b * c + a * s;
    }
    return y;
  };
  const queries: number[][][] = [];
  for (let r = 0; r < L; r++) {
    const p = pos0 + r;
    queries.push(Array.from({ length: H }, (_, h) => rotate(r * width + h * D, p)));
    for (let g = 0; g < kvHeads; g++) {
      keys.set(rotate(r * width + (H + g) * D, p), (g * maxSeq + p) * D);
      values.set(
        qkv.subarray(r * width + (H + kvHeads + g) * D, r * width + (H + kvHeads + g + 1) * D),
        (g * maxSeq + p) * D,
      );
    }
  }
  const out = new Float32Array(L * H * D);
  const group = H / kvHeads;
  for (let r = 0; r < L; r++) {
    const p = pos0 + r;
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / group);
      const q = queries[r][h];
      const scores = Array.from({ length: p + 1 }, (_, t) => {
        let s = 0;
        for (let d = 0; d < D; d++) s += q[d] * keys[(g * maxSeq + t) * D + d];
        return s * scale;
      });
      const max = scores.reduce((m, s) => Math.max(m, s), -Infinity);
      const weights = scores.map((s) => Math.exp(s - max));
      const sum = weights.reduce((a, w) => a + w, 0);
      for (let d = 0; d < D; d++) {
        let acc = 0;
        for (let t = 0; t <= p; t++) acc += weights[t] * values[(g * maxSeq + t) * D + d];
        out[(r * H + h) * D + d] = acc / sum;
      }
    }
  }
  return { out, keys, values };
}
