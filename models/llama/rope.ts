/**
 * RoPE frequencies as transformers computes them (`modeling_rope_utils.py`, 4.5x / 5.x): the
 * inverse frequencies in f32 (torch computes them in float32, and the engine's angles are
 * `f32(position) * inv_freq` in f32 as torch's `inv_freq @ position_ids` is), and the attention
 * factor that scales cos and sin (yarn's mscale; 1 for the other types).
 *
 * - none: `inv_freq[i] = 1 / theta^(2i / dim)`.
 * - linear: the same divided by `factor`.
 * - dynamic (NTK): while the sequence (the largest position of a call + 1) is longer than
 *   `max_position_embeddings`, theta becomes
 *   `theta * (factor * seq / max - (factor - 1))^(dim / (dim - 2))`; otherwise unscaled (transformers
 *   reads `max_position_embeddings` here, not `original_max_position_embeddings`). The
 *   frequencies therefore depend on the call, as in transformers' `dynamic_rope_update`; keys already
 *   in the cache keep the rotation they were written with, as HF's cache does.
 * - yarn: interpolated frequencies (`1 / (factor * pos_freq)`) blended with the original ones by a
 *   linear ramp between the correction dims of `beta_fast` and `beta_slow`; attention factor
 *   `attention_factor`, or `get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)` when both
 *   mscales are given, or `0.1 ln(factor) + 1`. Not pinned by a transformers fixture (only none and
 *   llama3 are): written from transformers' code.
 * - llama3: wavelengths longer than `original / low_freq_factor` divided by `factor`, shorter than
 *   `original / high_freq_factor` kept, and smoothly interpolated between.
 *
 * @module
 */

import type { LlamaConfig } from "./config.ts";

/** A call's RoPE: the f32 inverse frequencies (`headDim / 2`) and the factor applied to cos and sin. */
export interface RopeFrequencies {
  /** `inv_freq`, rounded to f32 at each step as torch computes it. */
  invFreq: Float32Array;
  /** Multiplies cos and sin (yarn's mscale; 1 otherwise). */
  attentionScaling: number;
}

const f = Math.fround;

function baseInvFreq(theta: number, dim: number): Float32Array {
  const out = new Float32Array(dim / 2);
  // torch: 1.0 / (base ** (arange(0, dim, 2).float() / dim)), each step in float32.
  for (let i = 0; i < dim / 2; i++) out[i] = f(1 / f(Math.pow(theta, f((2 * i) / dim))));
  return out;
}

/**
 * The RoPE frequencies of a forward call whose largest position is `seqLen - 1`.
 *
 * @param config the model (theta, head size and `ropeScaling`)
 * @param seqLen the largest position of the call plus one (only dynamic scaling uses it)
 * @returns the inverse frequencies and the attention scaling
 *
 * @example
 * ```ts
 * import { ropeFrequencies, TINY_CONFIG } from "@xpu/ops/models/llama";
 * ropeFrequencies(TINY_CONFIG, 1).invFreq[0]; // 1: theta^0
 * ```
 */
export function ropeFrequencies(config: LlamaConfig, seqLen: number): RopeFrequencies {
  const dim = config.headDim;
  const theta = config.ropeTheta;
  const s = config.ropeScaling;
  switch (s.ropeType) {
    case "none":
      return { invFreq: baseInvFreq(theta, dim), attentionScaling: 1 };
    case "linear":
      return { invFreq: baseInvFreq(theta, dim).map((v) => f(v / s.factor)), attentionScaling: 1 };
    case "dynamic": {
      // transformers scales against config.max_position_embeddings here, not the rope parameters'
      // original_max_position_embeddings (which its dynamic function never reads).
      const max = config.maxPositionEmbeddings;
      if (seqLen <= max) return { invFreq: baseInvFreq(theta, dim), attentionScaling: 1 };
      const base = theta * Math.pow((s.factor * seqLen) / max - (s.factor - 1), dim / (dim - 2));
      return { invFreq: baseInvFreq(base, dim), attentionScaling: 1 };
    }
    case "yarn": {
      const getMscale = (scale: number, m = 1) => (scale <= 1 ? 1 : 0.1 * m * Math.log(scale) + 1);
      let attentionScaling = s.attentionFactor;
      if (attentionScaling === null) {
        attentionScaling = s.mscale !== null && s.mscaleAllDim !== null
          ? getMscale(s.factor, s.mscale) / getMscale(s.factor, s.mscaleAllDim)
          : getMscale(s.factor);
      }
      const correctionDim = (rotations: number) =>
        (dim * Math.log(s.originalMaxPositionEmbeddings / (rotations * 2 * Math.PI))) / (2 * Math.log(theta));
      let low = correctionDim(s.betaFast);
      let high = correctionDim(s.betaSlow);
      if (s.truncate) [low, high] = [Math.floor(low), Math.ceil(high)];
      low = Math.max(low, 0);
      high = Math.min(high, dim - 1);
      if (low === high) high += 0.001;
      const out = new Float32Array(dim / 2);
      for (let i = 0; i < dim / 2; i++) {
        const posFreq = f(Math.pow(theta, f((2 * i) / dim)));
        const extrapolation = f(1 / posFreq);
        const interpolation = f(1 / f(s.factor * posFreq));
        const ramp = Math.min(1, Math.max(0, f(f(i - low) / f(high - low))));
        const extrapolationFactor = f(1 - ramp);
        out[i] = f(f(interpolation * f(1 - extrapolationFactor)) + f(extrapolation * extrapolationFactor));
      }
      return { invFreq: out, attentionScaling };
    }
    case "llama3": {
      const inv = baseInvFreq(theta, dim);
      const old = s.originalMaxPositionEmbeddings;
      const lowWavelen = old / s.lowFreqFactor;
      const highWavelen = old / s.highFreqFactor;
      const out = new Float32Array(dim / 2);
      for (let i = 0; i < dim / 2; i++) {
        const wavelen = f((2 * Math.PI) / inv[i]);
        if (wavelen < highWavelen) out[i] = inv[i];
        else if (wavelen > lowWavelen) out[i] = f(inv[i] / s.factor);
        else {
          const smooth = f(f(old / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor));
          out[i] = f(f(f(1 - smooth) * f(inv[i] / s.factor)) + f(smooth * inv[i]));
        }
      }
      return { invFreq: out, attentionScaling: 1 };
    }
  }
}

/**
 * cos and sin of one position's angles, interleaved `[cos_0, sin_0, cos_1, sin_1, ...]`, times the
 * attention scaling, as f64 values of torch's f32 angle `f32(position) * inv_freq`.
 *
 * @param rope the call's frequencies
 * @param position the token's position
 * @returns `headDim` numbers
 *
 * @example
 * ```ts
 * import { ropeCosSin, ropeFrequencies, TINY_CONFIG } from "@xpu/ops/models/llama";
 * const rope = ropeFrequencies(TINY_CONFIG, 8);
 * const cs = ropeCosSin(rope, 0); // position 0: every angle is 0
 * [cs[0], cs[1]]; // [1, 0]: cos and sin of the first pair
 * ```
 */
export function ropeCosSin(rope: RopeFrequencies, position: number): Float64Array {
  const half = rope.invFreq.length;
  const out = new Float64Array(2 * half);
  for (let i = 0; i < half; i++) {
    const angle = f(f(position) * rope.invFreq[i]);
    out[2 * i] = Math.cos(angle) * rope.attentionScaling;
    out[2 * i + 1] = Math.sin(angle) * rope.attentionScaling;
  }
  return out;
}
