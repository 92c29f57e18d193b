/**
 * The DiT's timestep sinusoid, on the host (upstream's `TimestepEmbedder.timestep_embedding`):
 *
 * ```
 * f_k = exp(−ln(10000) · k / 128)          k = 0 .. 127   (float32, as torch computes it)
 * a_k = f32(f32(t · tScale) · f_k)          the argument, as float32 rounds it (up to ~1000 rad)
 * emb = [cos(a_0) .. cos(a_127), sin(a_0) .. sin(a_127)]    cos half first
 * ```
 *
 * cos and sin are taken in float64 of the float32 argument and rounded once: WGSL promises their
 * accuracy only on [−π, π], and at ~1000 rad two float32 libraries already differ by ~1e-4 (the
 * oracle's CPU and CUDA goldens do), so the 256 values are computed here and uploaded each step.
 *
 * @module
 */

import { FREQUENCY_EMBEDDING_SIZE, MAX_PERIOD } from "../config.ts";

/**
 * The timestep sinusoid of the DiT's input t.
 *
 * @param t the DiT's t (1 − σ, see scheduler.ts), a finite number
 * @param tScale its multiplier (1000)
 * @returns 256 values: the cosines, then the sines
 * @throws Error when t or tScale is not finite
 *
 * @example
 * ```ts
 * import { timestepSinusoid } from "@xpu/ops/models/zimage";
 * const emb = timestepSinusoid(0); // t = 0: cosines 1, sines 0
 * [emb[0], emb[128]]; // [1, 0]
 * ```
 */
export function timestepSinusoid(t: number, tScale = 1000): Float32Array {
  if (!Number.isFinite(t) || !Number.isFinite(tScale)) {
    throw new Error(`timestepSinusoid: t and tScale must be finite, got ${t} and ${tScale}`);
  }
  const half = FREQUENCY_EMBEDDING_SIZE / 2;
  const scaled = Math.fround(Math.fround(t) * Math.fround(tScale));
  const c = Math.fround(-Math.log(MAX_PERIOD));
  const out = new Float32Array(2 * half);
  for (let k = 0; k < half; k++) {
    const freq = Math.fround(Math.exp(Math.fround(Math.fround(c * k) / half)));
    const a = Math.fround(scaled * freq);
    out[k] = Math.cos(a);
    out[half + k] = Math.sin(a);
  }
  return out;
}
