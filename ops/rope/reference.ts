/**
 * Reference for rotary position embedding (RoPE): what correct means, in plain TypeScript.
 *
 * `rope({ x, tokens, heads, headDim, ... })` rotates `x` `[tokens, heads, headDim]` (one sequence,
 * token-major, heads next, then the head's channels: the layout of a q or k projection's output
 * before any transpose) pair by pair:
 *
 * ```
 * p      = f32(positions[t] + offset)          positions default to 0, 1, ..., tokens - 1
 * angle  = p * invFreq[i]                      i = 0 .. headDim/2 - 1
 * out[t, h, 2i]     = af * (x[2i] cos(angle) - x[2i+1] sin(angle))
 * out[t, h, 2i + 1] = af * (x[2i] sin(angle) + x[2i+1] cos(angle))
 * ```
 *
 * for heads in `[headOffset, headOffset + headCount)`; the other heads are copied. `invFreq` and the
 * attention factor `af` are transformers' `ROPE_INIT_FUNCTIONS` (v5.17) for the scaling chosen
 * ({@link ropeFrequencies}): none, linear, dynamic NTK, YaRN (whose `af` is its attention
 * temperature, applied to cos and sin as transformers does) and llama3; af is 1 for the others.
 *
 * - Pairs are adjacent channels (2i, 2i+1), as Meta's original Llama and GPT-J; HF Llama's
 *   `rotate_half` pairs i with i + headDim/2 instead. The two are the same rotation with the
 *   channels numbered differently, so a rotate_half checkpoint runs here after
 *   {@link permuteRopeChannels} relabels the rows of its q and k projections.
 * - Positions are f32 and may be fractional (a rotation by a fractional angle is still a rotation);
 *   `offset` (the KV-cache length before this call) is added to every position, in f32.
 * - `ropeCache` `[cacheLength, headDim/2]` is a table of precomputed angles: a token whose position
 *   is an integer in `[0, cacheLength)` takes row p of it; any other position (fractional, negative
 *   or past the end) has its angle computed. Past the end is computed, never wrapped to the start.
 * - The head range rotates whole heads (Irodori-TTS's `chunk(2, dim=-2)`), not the first
 *   `rotaryDim` channels of every head (partial rotary), which is not implemented.
 *
 * Accumulation is f64 (the angle, its cosine and sine, the products) and each output is rounded to
 * f32 once. invFreq is rounded to f32 first, since that is what transformers and the kernel hold.
 *
 * @module
 */

import { requireArgs, requireArray, requireF32, requireInt, requireOneOf, U32_MAX } from "../validate.ts";

export * from "./axes_reference.ts";

/** Frequency scaling for long contexts, as transformers' `rope_parameters` (v5) / `rope_scaling` (v4). */
export type RopeScaling =
  | { type: "linear"; factor: number }
  | {
    type: "dynamic";
    factor: number;
    /** The model's `max_position_embeddings`. */
    maxPositionEmbeddings: number;
    /** The sequence length the frequencies are for (transformers: the largest position id + 1). */
    seqLen: number;
  }
  | {
    type: "yarn";
    factor: number;
    /** The pretrained context, `original_max_position_embeddings`. */
    originalMaxPositionEmbeddings: number;
    /** Default 32. */
    betaFast?: number;
    /** Default 1. */
    betaSlow?: number;
    /** DeepSeek's `mscale`; with `mscaleAllDim` sets the attention factor. */
    mscale?: number;
    /** DeepSeek's `mscale_all_dim`. */
    mscaleAllDim?: number;
    /** Overrides the attention factor (default `0.1 ln(factor) + 1`). */
    attentionFactor?: number;
    /** Round the correction range outwards (default true, as transformers). */
    truncate?: boolean;
  }
  | {
    type: "llama3";
    factor: number;
    lowFreqFactor: number;
    highFreqFactor: number;
    originalMaxPositionEmbeddings: number;
  };

/** The base used when none is given (Llama 2's `rope_theta`). */
export const ROPE_DEFAULT_THETA = 10000;

/** Sizes and scalars of {@link rope}. */
export interface RopeShape {
  /** Tokens (rows of x's leading axis), >= 1. */
  tokens: number;
  /** Heads per token, >= 1. */
  heads: number;
  /** Channels per head, even, >= 2. */
  headDim: number;
  /** The frequency base `rope_theta`, > 0. Default 10000. */
  theta?: number;
  /** Long-context scaling; absent means none. */
  scaling?: RopeScaling;
  /** Added to every position (the KV cache's length). Default 0. */
  offset?: number;
  /** First rotated head. Default 0. */
  headOffset?: number;
  /** Rotated heads from headOffset on. Default all of them from headOffset. */
  headCount?: number;
  /** Rows of `ropeCache`; for {@link rope} it is read from the cache's length. Default 0 (no cache). */
  cacheLength?: number;
}

/** Arguments of {@link rope}. */
export interface RopeArgs extends RopeShape {
  /** Input, `[tokens, heads, headDim]` row-major. */
  x: Float32Array;
  /** Position of each token, `[tokens]`, f32, fractional allowed. Default 0 .. tokens - 1. */
  positions?: Float32Array;
  /** Precomputed angles, `[cacheLength, headDim / 2]`. */
  ropeCache?: Float32Array;
}

/** {@link RopeShape} with every default filled in, and the frequencies. */
export interface RopeResolved {
  /** The frequency base. */
  theta: number;
  /** Added to every position. */
  offset: number;
  /** First rotated head. */
  headOffset: number;
  /** Rotated heads. */
  headCount: number;
  /** Rows of the angle cache (0 for none). */
  cacheLength: number;
  /** Inverse frequencies, `[headDim / 2]`, rounded to f32. */
  invFreq: Float32Array;
  /** Multiplies cos and sin (YaRN's attention temperature; 1 otherwise). */
  attentionFactor: number;
}

const SHAPE_FIELDS = "tokens, heads, headDim, theta?, scaling?, offset?, headOffset?, headCount?";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = [
  "x",
  "positions",
  "ropeCache",
  "tokens",
  "heads",
  "headDim",
  "theta",
  "scaling",
  "offset",
  "headOffset",
  "headCount",
  "cacheLength",
];

/**
 * Validates {@link rope}'s sizes and scalars.
 *
 * @param shape the sizes and scalars
 * @returns the shape with defaults filled in, and the frequencies
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateRopeShape } from "@xpu/ops/ops/rope";
 * const { headCount, invFreq } = validateRopeShape({ tokens: 8, heads: 32, headDim: 128, theta: 500000 });
 * headCount; // 32: every head, from headOffset 0
 * invFreq.length; // 64: one per pair of channels
 * ```
 */
export function validateRopeShape(shape: RopeShape): RopeResolved {
  requireArgs("rope", "shape", shape, `{ ${SHAPE_FIELDS}, cacheLength? }`, KEYS);
  requireInt("rope", "tokens", shape.tokens, 1, U32_MAX);
  requireInt("rope", "heads", shape.heads, 1, U32_MAX);
  requireInt("rope", "headDim", shape.headDim, 2, U32_MAX);
  if (shape.headDim % 2 !== 0) throw new Error(`rope: headDim must be even, got ${shape.headDim}`);
  const offset = requireF32("rope", "offset", shape.offset ?? 0);
  const headOffset = requireInt("rope", "headOffset", shape.headOffset ?? 0, 0, shape.heads);
  const headCount = requireInt(
    "rope",
    "headCount",
    shape.headCount ?? shape.heads - headOffset,
    0,
    shape.heads - headOffset,
  );
  const cacheLength = requireInt("rope", "cacheLength", shape.cacheLength ?? 0, 0, 2 ** 31 - 1);
  const theta = shape.theta ?? ROPE_DEFAULT_THETA;
  const { invFreq, attentionFactor } = ropeFrequencies(shape.headDim, theta, shape.scaling);
  return { theta, offset, headOffset, headCount, cacheLength, invFreq, attentionFactor };
}

/**
 * Validates {@link rope}'s arguments.
 *
 * @param args the arguments
 * @returns as {@link validateRopeShape}
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateRope } from "@xpu/ops/ops/rope";
 * validateRope({ x: new Float32Array(16), tokens: 2, heads: 2, headDim: 4, offset: 7 }).offset; // 7
 * ```
 */
export function validateRope(args: RopeArgs): RopeResolved {
  requireArgs("rope", "args", args, `{ x, positions?, ropeCache?, ${SHAPE_FIELDS} }`, KEYS);
  let cacheLength = 0;
  if (args.ropeCache !== undefined) {
    requireArray("rope", "ropeCache", args.ropeCache, "Float32Array");
    requireInt("rope", "headDim", args.headDim, 2, U32_MAX);
    const half = Math.floor(args.headDim / 2);
    if (args.ropeCache.length % half !== 0) {
      throw new Error(
        `rope: ropeCache must have length cacheLength * headDim / 2 (a multiple of ${half}), got ${args.ropeCache.length}`,
      );
    }
    cacheLength = args.ropeCache.length / half;
  }
  if (args.cacheLength !== undefined && args.cacheLength !== cacheLength) {
    throw new Error(`rope: cacheLength must match ropeCache (${cacheLength} rows), got ${args.cacheLength}`);
  }
  const resolved = validateRopeShape({ ...args, cacheLength });
  const { tokens, heads, headDim } = args;
  requireArray("rope", "x", args.x, "Float32Array", [tokens * heads * headDim, "tokens * heads * headDim"]);
  if (args.positions !== undefined) {
    requireArray("rope", "positions", args.positions, "Float32Array", [tokens, "tokens"]);
    args.positions.forEach((p, t) => requireF32("rope", `positions[${t}]`, p));
  }
  return resolved;
}

function positive(name: string, value: unknown): number {
  const v = requireF32("rope", name, value);
  if (v <= 0) throw new Error(`rope: ${name} must be > 0, got ${v}`);
  return v;
}

/**
 * The inverse frequencies and attention factor of transformers' `ROPE_INIT_FUNCTIONS[rope_type]`
 * (v5.17) for a head of `headDim` channels, computed in f64 and rounded to f32.
 *
 * @param headDim channels per head (even)
 * @param theta the base `rope_theta` (> 0)
 * @param scaling the scaling, or none
 * @returns `invFreq` `[headDim / 2]` and `attentionFactor`
 * @throws Error naming a bad scaling field
 *
 * @example
 * ```ts
 * import { ropeFrequencies } from "@xpu/ops/ops/rope";
 * ropeFrequencies(4, 10000).invFreq; // [1, 0.01]
 * ```
 */
export function ropeFrequencies(
  headDim: number,
  theta: number = ROPE_DEFAULT_THETA,
  scaling?: RopeScaling,
): { invFreq: Float32Array; attentionFactor: number } {
  requireInt("rope", "headDim", headDim, 2);
  let base = positive("theta", theta);
  const half = headDim / 2;
  const plain = (b: number) => Array.from({ length: half }, (_, i) => 1 / b ** ((2 * i) / headDim));
  if (scaling === undefined) return { invFreq: Float32Array.from(plain(base)), attentionFactor: 1 };
  const type = requireOneOf("rope", "scaling.type", scaling.type, ["linear", "dynamic", "yarn", "llama3"]);
  const factor = positive("scaling.factor", scaling.factor);
  if (type === "linear") return { invFreq: Float32Array.from(plain(base), (f) => f / factor), attentionFactor: 1 };
  if (scaling.type === "dynamic") {
    const maxPos = positive("scaling.maxPositionEmbeddings", scaling.maxPositionEmbeddings);
    const seqLen = Math.max(positive("scaling.seqLen", scaling.seqLen), maxPos);
    base = base * ((factor * seqLen) / maxPos - (factor - 1)) ** (headDim / (headDim - 2));
    return { invFreq: Float32Array.from(plain(base)), attentionFactor: 1 };
  }
  if (scaling.type === "llama3") {
    const original = positive("scaling.originalMaxPositionEmbeddings", scaling.originalMaxPositionEmbeddings);
    const low = positive("scaling.lowFreqFactor", scaling.lowFreqFactor);
    const high = positive("scaling.highFreqFactor", scaling.highFreqFactor);
    if (high <= low) throw new Error(`rope: scaling.highFreqFactor must be > lowFreqFactor, got ${high} <= ${low}`);
    const invFreq = plain(base).map((f) => {
      const wavelen = (2 * Math.PI) / f;
      if (wavelen < original / high) return f; // high frequencies: kept
      if (wavelen > original / low) return f / factor; // low frequencies: interpolated
      const smooth = (original / wavelen - low) / (high - low);
      return (1 - smooth) * (f / factor) + smooth * f;
    });
    return { invFreq: Float32Array.from(invFreq), attentionFactor: 1 };
  }
  return yarnFrequencies(headDim, base, factor, scaling as Extract<RopeScaling, { type: "yarn" }>);
}

function yarnFrequencies(
  dim: number,
  base: number,
  factor: number,
  s: Extract<RopeScaling, { type: "yarn" }>,
): { invFreq: Float32Array; attentionFactor: number } {
  const original = positive("scaling.originalMaxPositionEmbeddings", s.originalMaxPositionEmbeddings);
  const betaFast = positive("scaling.betaFast", s.betaFast ?? 32);
  const betaSlow = positive("scaling.betaSlow", s.betaSlow ?? 1);
  const mscaleOf = (scale: number, m = 1) => (scale <= 1 ? 1 : 0.1 * m * Math.log(scale) + 1);
  let attentionFactor: number;
  if (s.attentionFactor !== undefined) attentionFactor = positive("scaling.attentionFactor", s.attentionFactor);
  else if (s.mscale && s.mscaleAllDim) {
    attentionFactor = mscaleOf(factor, requireF32("rope", "scaling.mscale", s.mscale)) /
      mscaleOf(factor, requireF32("rope", "scaling.mscaleAllDim", s.mscaleAllDim));
  } else attentionFactor = mscaleOf(factor);
  // The dimension (in channels) at which a wavelength makes `rotations` turns over the original context.
  const correctionDim = (rotations: number) =>
    (dim * Math.log(original / (rotations * 2 * Math.PI))) / (2 * Math.log(base));
  let low = correctionDim(betaFast);
  let high = correctionDim(betaSlow);
  if (s.truncate ?? true) {
    low = Math.floor(low);
    high = Math.ceil(high);
  }
  low = Math.max(low, 0);
  high = Math.min(high, dim - 1);
  if (low === high) high += 0.001;
  const invFreq = Array.from({ length: dim / 2 }, (_, i) => {
    const extrapolation = 1 / base ** ((2 * i) / dim);
    const interpolation = extrapolation / factor;
    const ramp = Math.min(1, Math.max(0, (i - low) / (high - low)));
    const keep = 1 - ramp; // share of the extrapolated (unscaled) frequency
    return interpolation * (1 - keep) + extrapolation * keep;
  });
  return { invFreq: Float32Array.from(invFreq), attentionFactor };
}

/**
 * Rotary position embedding of `x` `[tokens, heads, headDim]`, adjacent pairs (see the module doc).
 *
 * @param args input, sizes, positions, scaling, cache and head range
 * @returns a new Float32Array `[tokens, heads, headDim]`
 *
 * @example
 * ```ts
 * import { rope } from "@xpu/ops/ops/rope";
 * // One token at position 1, one head of 2 channels, theta irrelevant (invFreq[0] = 1):
 * rope({ x: new Float32Array([1, 0]), tokens: 1, heads: 1, headDim: 2, offset: 1 }); // [cos 1, sin 1]
 * ```
 */
export function rope(args: RopeArgs): Float32Array {
  const { offset, headOffset, headCount, cacheLength, invFreq, attentionFactor } = validateRope(args);
  const { x, tokens, heads, headDim, positions, ropeCache } = args;
  const half = headDim / 2;
  const out = new Float32Array(x.length);
  for (let t = 0; t < tokens; t++) {
    const p = Math.fround((positions ? positions[t] : t) + offset);
    const cached = ropeCache !== undefined && Number.isInteger(p) && p >= 0 && p < cacheLength;
    for (let h = 0; h < heads; h++) {
      const row = (t * heads + h) * headDim;
      const rotated = h >= headOffset && h < headOffset + headCount;
      for (let i = 0; i < half; i++) {
        const a = x[row + 2 * i], b = x[row + 2 * i + 1];
        if (!rotated) {
          out[row + 2 * i] = a;
          out[row + 2 * i + 1] = b;
          continue;
        }
        const angle = cached ? ropeCache[p * half + i] : p * invFreq[i];
        const c = Math.cos(angle) * attentionFactor, s = Math.sin(angle) * attentionFactor;
        out[row + 2 * i] = a * c - b * s;
        out[row + 2 * i + 1] = a * s + b * c;
      }
    }
  }
  return out;
}

/**
 * Relabels the rows of a q or k projection weight from HF Llama's `rotate_half` channel order (pair
 * i with i + headDim/2) to the adjacent pairs {@link rope} rotates: within each head, new row 2i is
 * old row i and new row 2i + 1 is old row i + headDim/2. Then `rope(x W'^T)` is
 * `apply_rotary_pos_emb(x W^T)` with each head's channels in that new order, and since q and k are
 * permuted alike, every attention score q·k is unchanged. Exact: rows are moved, not recomputed.
 *
 * @param weight the projection, `[heads * headDim, cols]` row-major (`F.linear`'s `[out, in]`)
 * @param heads heads in the projection's output
 * @param headDim channels per head (even)
 * @param cols columns of the weight (the projection's input size); 1 relabels a vector of activations
 * @returns a new Float32Array, the permuted weight
 *
 * @example
 * ```ts
 * import { permuteRopeChannels } from "@xpu/ops/ops/rope";
 * // One head of 4 channels, rows [r0, r1, r2, r3] -> [r0, r2, r1, r3]:
 * permuteRopeChannels(new Float32Array([0, 1, 2, 3]), 1, 4, 1); // [0, 2, 1, 3]
 * ```
 */
export function permuteRopeChannels(weight: Float32Array, heads: number, headDim: number, cols: number): Float32Array {
  requireInt("permuteRopeChannels", "heads", heads, 1);
  requireInt("permuteRopeChannels", "headDim", headDim, 2);
  if (headDim % 2 !== 0) throw new Error(`permuteRopeChannels: headDim must be even, got ${headDim}`);
  requireInt("permuteRopeChannels", "cols", cols, 1);
  requireArray("permuteRopeChannels", "weight", weight, "Float32Array", [
    heads * headDim * cols,
    "heads * headDim * cols",
  ]);
  const out = new Float32Array(weight.length);
  const half = headDim / 2;
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      const head = h * headDim;
      out.set(weight.subarray((head + i) * cols, (head + i + 1) * cols), (head + 2 * i) * cols);
      out.set(weight.subarray((head + half + i) * cols, (head + half + i + 1) * cols), (head + 2 * i + 1) * cols);
    }
  }
  return out;
}
