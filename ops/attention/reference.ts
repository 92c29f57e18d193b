/**
 * Reference for scaled dot-product attention: what correct means, in plain TypeScript.
 *
 * `attention(args)` matches torch 2.11's `F.scaled_dot_product_attention(q, k, v, attn_mask, is_causal,
 * scale)` with `q` `[B, H, L, D]`, `k` `[B, H, S, D]`, `v` `[B, H, S, Dv]`, all row-major f32:
 *
 * - scores `q · k * scale`, `scale` 1/sqrt(D) (the query's head dim) unless given;
 * - `causal`: key j is visible to query row i iff `j <= i + queryOffset`. `queryOffset` 0 is torch's
 *   `is_causal=True` (upper-left aligned, `torch.tril(ones(L, S))`); `S - L` is
 *   `causal_lower_right` (the last query row sees every key: a query block appended to a KV cache);
 * - `mask`: torch's float `attn_mask`, added to the scores (`-Infinity` masks a key), broadcast from
 *   `maskShape` `[mB, mH, mL, S]` with each of mB, mH, mL either 1 or the full B, H, L (so
 *   `[B, 1, 1, S]` key padding and `[B, H, L, S]` are both legal). A boolean mask goes through
 *   {@link keyPaddingBias} first. `causal` with `mask` is refused, as torch refuses it;
 * - softmax over the visible keys, then the weighted sum of `v`. A row whose every key is masked
 *   (all `-Infinity`, or none visible under `causal`) is zeros, as `aten::_safe_softmax` (which SDPA
 *   uses) returns, not the NaN of a plain `torch.softmax`. A finite mask value, however negative,
 *   masks nothing on its own: a row of only -1e30 is a uniform average, as in torch;
 * - NaN and ±Infinity as torch's math backend: a NaN score (from q, k or the mask) or a +Infinity one
 *   makes the row NaN, and the output is every key's v times its probability, 0 for a key masked by
 *   -Infinity, so NaN or ±Infinity in v makes that column NaN (0 * inf) or ±Infinity, masked keys and
 *   fully masked rows included. Where torch's backends differ from each other: a row whose every score
 *   is NaN (a NaN query) is NaN (the math backend; the fused CPU kernel finds no maximum and gives 0).
 *   A key hidden by `causal` is no part of the row: it has no score, whatever its k (as the fused
 *   kernels; the math backend adds -inf to a NaN score, NaN), and its v is not read (the math backend
 *   multiplies it by 0, NaN for a NaN v, and so do the fused kernels within the key blocks they
 *   compute, so torch's answer depends on its block size; the fused kernels here stop at the last key
 *   a row sees). Tested against torch, each difference pinned (nonfinite.test.ts,
 *   goldens/sdpa_nonfinite.py).
 *
 * The same function serves flash_attention (one dispatch) and gqa (kvHeads < H): {@link attentionOf}
 * takes the number of KV heads, query head h reading KV head `floor(h / (H / kvHeads))` (contiguous
 * groups, torch's `enable_gqa=True`). Accumulation is f64 and each output is rounded to f32 once.
 *
 * @module
 */

import { requireArgs, requireArray, requireF32, requireInt } from "../validate.ts";

/**
 * The keys an attention shape or arguments object may carry: sizes, scalars and arrays (a plan may be
 * given the arguments). flashAttention and gqa take these and their own.
 */
export const ATTENTION_KEYS: readonly string[] = [
  "q",
  "k",
  "v",
  "mask",
  "B",
  "H",
  "L",
  "S",
  "D",
  "Dv",
  "scale",
  "causal",
  "queryOffset",
  "maskShape",
];

/** Sizes and scalars of one attention call (shared by attention, flashAttention and gqa). */
export interface AttentionShape {
  /** Batch. */
  B: number;
  /** Query heads. */
  H: number;
  /** Query rows per head. */
  L: number;
  /** Keys per head. */
  S: number;
  /** Head dim of q and k. */
  D: number;
  /** Head dim of v and of the output (default D). */
  Dv?: number;
  /** Multiplies q · k (default 1 / sqrt(D)); a finite f32. */
  scale?: number;
  /** Whether key j is hidden from row i when j > i + queryOffset (default false). */
  causal?: boolean;
  /** Position of query row 0 among the keys, for `causal` (default 0; S - L is lower-right aligned). */
  queryOffset?: number;
  /** Shape of `mask`, `[mB, mH, mL, S]`, each of mB, mH, mL 1 or the full size; required with `mask`. */
  maskShape?: readonly [number, number, number, number];
}

/** Arguments of {@link attention}: the shape and the arrays. */
export interface AttentionArgs extends AttentionShape {
  /** Queries, `[B, H, L, D]`. */
  q: Float32Array;
  /** Keys, `[B, H, S, D]` (`[B, kvHeads, S, D]` for gqa). */
  k: Float32Array;
  /** Values, `[B, H, S, Dv]` (`[B, kvHeads, S, Dv]` for gqa). */
  v: Float32Array;
  /** Additive float mask (torch's float attn_mask) of shape `maskShape`; `-Infinity` masks. */
  mask?: Float32Array;
}

/** An attention shape with every default filled in. */
export interface ResolvedAttentionShape {
  /** Batch. */
  B: number;
  /** Query heads. */
  H: number;
  /** KV heads (H for attention and flashAttention). */
  kvHeads: number;
  /** Query rows per head. */
  L: number;
  /** Keys per head. */
  S: number;
  /** Head dim of q and k. */
  D: number;
  /** Head dim of v and of the output. */
  Dv: number;
  /** Multiplies q · k. */
  scale: number;
  /** Whether key j is hidden from row i when j > i + queryOffset. */
  causal: boolean;
  /** Position of query row 0 among the keys, for `causal`. */
  queryOffset: number;
  /** `[mB, mH, mL, S]`, or undefined without a mask. */
  maskShape?: readonly [number, number, number, number];
}

/** The fields of an attention shape, for the message of a missing one (gqa adds kvHeads). */
export const ATTENTION_SHAPE_FIELDS = "B, H, L, S, D, Dv?, scale?, causal?, queryOffset?, maskShape?";

/** Largest |queryOffset|: row + offset must stay an i32 in the kernels. */
const MAX_OFFSET = 2 ** 30;

/** Largest size of any one dimension (the kernels index in u32 and take the product of two as an index). */
const MAX_DIM = 2 ** 24;

/**
 * Checks an attention shape for `op` and fills in the defaults. Shared by attention, flashAttention and
 * gqa, each of which calls it from its own `validate<Op>Shape`.
 *
 * @param op the op, for messages
 * @param shape the sizes and scalars
 * @param kvHeads KV heads (H for attention and flashAttention)
 * @param hasMask whether a mask will be given (a maskShape without a mask, or the reverse, is refused)
 * @returns the shape with its defaults
 * @throws Error naming the argument, what was expected and what was given
 *
 * @example
 * ```ts
 * import { checkAttentionShape } from "@xpu/ops/ops/attention";
 * // Eight query heads over two KV heads, as gqa calls it (attention passes kvHeads = H):
 * const shape = checkAttentionShape("gqa", { B: 1, H: 8, L: 1, S: 64, D: 16 }, 2, false);
 * shape.scale; // 0.25 = 1 / sqrt(D)
 * ```
 */
export function checkAttentionShape(
  op: string,
  shape: AttentionShape,
  kvHeads: number,
  hasMask: boolean,
): ResolvedAttentionShape {
  const B = requireInt(op, "B", shape.B, 1, MAX_DIM);
  const H = requireInt(op, "H", shape.H, 1, MAX_DIM);
  const L = requireInt(op, "L", shape.L, 1, MAX_DIM);
  const S = requireInt(op, "S", shape.S, 1, MAX_DIM);
  const D = requireInt(op, "D", shape.D, 1, MAX_DIM);
  const Dv = requireInt(op, "Dv", shape.Dv ?? D, 1, MAX_DIM);
  requireInt(op, "kvHeads", kvHeads, 1, MAX_DIM);
  if (H % kvHeads !== 0) {
    throw new Error(
      `${op}: H must be a multiple of kvHeads (contiguous groups of H / kvHeads), got H = ${H}, kvHeads = ${kvHeads}`,
    );
  }
  const scale = requireF32(op, "scale", shape.scale ?? 1 / Math.sqrt(D));
  const causal = shape.causal ?? false;
  if (typeof causal !== "boolean") throw new Error(`${op}: causal must be a boolean, got ${String(causal)}`);
  const queryOffset = requireInt(op, "queryOffset", shape.queryOffset ?? 0, -MAX_OFFSET, MAX_OFFSET);
  if (shape.maskShape !== undefined && !hasMask) {
    throw new Error(`${op}: maskShape was given without a mask`);
  }
  if (!hasMask) return { B, H, kvHeads, L, S, D, Dv, scale, causal, queryOffset };
  if (causal) {
    throw new Error(
      `${op}: causal and mask cannot both be given (torch's scaled_dot_product_attention refuses is_causal with attn_mask); ` +
        `fold the causal mask into mask instead`,
    );
  }
  const ms = shape.maskShape;
  if (!Array.isArray(ms) || ms.length !== 4) {
    throw new Error(`${op}: maskShape must be [mB, mH, mL, S], got ${JSON.stringify(ms)}`);
  }
  const full = [B, H, L] as const;
  for (const [i, name] of (["B", "H", "L"] as const).entries()) {
    if (ms[i] !== 1 && ms[i] !== full[i]) {
      throw new Error(`${op}: maskShape[${i}] must be 1 or ${name} = ${full[i]}, got ${ms[i]}`);
    }
  }
  if (ms[3] !== S) throw new Error(`${op}: maskShape[3] must be S = ${S}, got ${ms[3]}`);
  return { B, H, kvHeads, L, S, D, Dv, scale, causal, queryOffset, maskShape: [ms[0], ms[1], ms[2], ms[3]] };
}

/**
 * Checks the arrays of an attention call for `op` against its resolved shape.
 *
 * @param op the op, for messages
 * @param args the arrays
 * @param shape the resolved shape
 * @param heads the name of k's and v's head count in messages: "H", or "kvHeads" for gqa
 * @throws Error naming the array, its required type and length, and what was given
 *
 * @example
 * ```ts
 * import { checkAttentionArrays, validateAttentionShape } from "@xpu/ops/ops/attention";
 * const args = {
 *   q: new Float32Array([1, 0]),
 *   k: new Float32Array([1, 0, 1, 0]),
 *   v: new Float32Array([2, 4]),
 *   B: 1, H: 1, L: 1, S: 2, D: 2, Dv: 1,
 * };
 * checkAttentionArrays("attention", args, validateAttentionShape(args)); // passes: q, k and v fit the shape
 * ```
 */
export function checkAttentionArrays(
  op: string,
  args: AttentionArgs,
  shape: ResolvedAttentionShape,
  heads?: "H" | "kvHeads",
): void {
  heads ??= "H";
  const { B, H, kvHeads, L, S, D, Dv } = shape;
  requireArray(op, "q", args.q, "Float32Array", [B * H * L * D, "B * H * L * D"]);
  requireArray(op, "k", args.k, "Float32Array", [B * kvHeads * S * D, `B * ${heads} * S * D`]);
  requireArray(op, "v", args.v, "Float32Array", [B * kvHeads * S * Dv, `B * ${heads} * S * Dv`]);
  if (shape.maskShape) {
    const [mB, mH, mL] = shape.maskShape;
    requireArray(op, "mask", args.mask, "Float32Array", [mB * mH * mL * S, "the product of maskShape"]);
  }
}

/**
 * Validates {@link attention}'s sizes and scalars (k and v have H heads).
 *
 * @param shape the sizes and scalars
 * @param hasMask whether a mask accompanies them (default: whether maskShape is given)
 * @returns the shape with its defaults
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateAttentionShape } from "@xpu/ops/ops/attention";
 * const shape = validateAttentionShape({ B: 1, H: 2, L: 3, S: 5, D: 4 });
 * shape.Dv; // 4: Dv defaults to D
 * shape.queryOffset; // 0
 * ```
 */
export function validateAttentionShape(shape: AttentionShape, hasMask?: boolean): ResolvedAttentionShape {
  requireArgs("attention", "shape", shape, `{ ${ATTENTION_SHAPE_FIELDS} }`, ATTENTION_KEYS);
  return checkAttentionShape("attention", shape, shape.H, hasMask ?? shape.maskShape !== undefined);
}

/**
 * Validates {@link attention}'s arguments.
 *
 * @param args the arguments
 * @returns the shape with its defaults
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateAttention } from "@xpu/ops/ops/attention";
 * const args = {
 *   q: new Float32Array([1, 0]),
 *   k: new Float32Array([1, 0, 1, 0]),
 *   v: new Float32Array([2, 4]),
 *   B: 1, H: 1, L: 1, S: 2, D: 2, Dv: 1,
 * };
 * validateAttention(args).scale; // 1 / sqrt(2)
 * ```
 */
export function validateAttention(args: AttentionArgs): ResolvedAttentionShape {
  requireArgs("attention", "args", args, `{ q, k, v, mask?, ${ATTENTION_SHAPE_FIELDS} }`, ATTENTION_KEYS);
  const shape = validateAttentionShape(args, args.mask !== undefined);
  checkAttentionArrays("attention", args, shape);
  return shape;
}

/**
 * Scaled dot-product attention with `shape.kvHeads` KV heads: the computation behind attention,
 * flashAttention and gqa, on arguments already validated by the op.
 *
 * @param args the arrays
 * @param shape the validated shape
 * @returns the output, `[B, H, L, Dv]`
 *
 * @example
 * ```ts
 * import { attentionOf, validateAttention } from "@xpu/ops/ops/attention";
 * const args = {
 *   q: new Float32Array([1, 0]),
 *   k: new Float32Array([1, 0, 1, 0]),
 *   v: new Float32Array([2, 4]),
 *   B: 1, H: 1, L: 1, S: 2, D: 2, Dv: 1,
 * };
 * attentionOf(args, validateAttention(args)); // [3]: what attention(args) returns
 * ```
 */
export function attentionOf(args: AttentionArgs, shape: ResolvedAttentionShape): Float32Array {
  const { B, H, kvHeads, L, S, D, Dv, scale, causal, queryOffset, maskShape } = shape;
  const { q, k, v, mask } = args;
  const group = H / kvHeads;
  const out = new Float32Array(B * H * L * Dv);
  const scores = new Float64Array(S);
  const sum = new Float64Array(Dv);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const kvHead = Math.floor(h / group);
      const kBase = (b * kvHeads + kvHead) * S;
      for (let i = 0; i < L; i++) {
        const qRow = ((b * H + h) * L + i) * D;
        let max = -Infinity, nan = false;
        // Keys past `visible` are hidden by causal: no score, and their v is not read.
        const visible = causal ? Math.max(0, Math.min(S, i + queryOffset + 1)) : S;
        for (let j = 0; j < S; j++) {
          let s = -Infinity;
          if (j < visible) {
            let dot = 0;
            for (let d = 0; d < D; d++) dot += q[qRow + d] * k[(kBase + j) * D + d];
            s = dot * scale;
            if (mask && maskShape) {
              const [mB, mH, mL] = maskShape;
              s += mask[(((mB === 1 ? 0 : b) * mH + (mH === 1 ? 0 : h)) * mL + (mL === 1 ? 0 : i)) * S + j];
            }
          }
          scores[j] = s;
          if (s > max) max = s;
          nan ||= Number.isNaN(s);
        }
        const outRow = ((b * H + h) * L + i) * Dv;
        if (nan) {
          out.fill(NaN, outRow, outRow + Dv); // a NaN score makes the softmax NaN
          continue;
        }
        // Every visible key's v times its probability, 0 for a key masked by -Infinity (p @ v, as
        // torch's math backend): 0 * NaN and 0 * inf are NaN. A row with every key masked has only
        // zeros (aten::_safe_softmax), so it is 0 unless some v is NaN or infinite.
        sum.fill(0);
        let total = 0;
        for (let j = 0; j < visible; j++) {
          const p = scores[j] === -Infinity ? 0 : Math.exp(scores[j] - max);
          total += p;
          for (let d = 0; d < Dv; d++) sum[d] += p * v[(kBase + j) * Dv + d];
        }
        for (let d = 0; d < Dv; d++) out[outRow + d] = max === -Infinity ? sum[d] : sum[d] / total;
      }
    }
  }
  return out;
}

/**
 * Scaled dot-product attention, `F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
 * is_causal=causal, scale=scale)`.
 *
 * @param args q, k, v, the optional additive mask, and the shape
 * @returns the output, `[B, H, L, Dv]`
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { attention } from "@xpu/ops/ops/attention";
 * // One query attending to two keys with equal scores: the average of the two values.
 * const out = attention({
 *   q: new Float32Array([1, 0]),
 *   k: new Float32Array([1, 0, 1, 0]),
 *   v: new Float32Array([2, 4]),
 *   B: 1, H: 1, L: 1, S: 2, D: 2, Dv: 1,
 * });
 * out[0]; // 3
 * ```
 */
export function attention(args: AttentionArgs): Float32Array {
  return attentionOf(args, validateAttention(args));
}

/**
 * Turns a boolean mask into attention's additive one: true (attend) becomes 0 and false (masked)
 * becomes -Infinity. The polarity is torch's boolean `attn_mask` (true = take part in attention),
 * the reverse of `nn.MultiheadAttention`'s `key_padding_mask` (true = ignore).
 *
 * @param mask booleans, or 0 / 1 (e.g. a Uint8Array), in any shape; the result keeps its order
 * @returns the additive mask, same length
 * @throws Error naming the first element that is neither a boolean nor 0 / 1
 *
 * @example
 * ```ts
 * import { keyPaddingBias } from "@xpu/ops/ops/attention";
 * keyPaddingBias([true, true, false]); // Float32Array [0, 0, -Infinity]
 * ```
 */
export function keyPaddingBias(mask: ArrayLike<boolean | number>): Float32Array {
  const out = new Float32Array(mask.length);
  for (let i = 0; i < mask.length; i++) {
    const m = mask[i];
    if (m !== true && m !== false && m !== 0 && m !== 1) {
      throw new Error(`keyPaddingBias: mask[${i}] must be a boolean or 0 / 1, got ${String(m)}`);
    }
    out[i] = m === true || m === 1 ? 0 : -Infinity;
  }
  return out;
}
