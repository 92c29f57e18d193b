/**
 * The DiT's timestep features, computed on the host in float64 and uploaded each step (a `[dim]`
 * write): Cosmos-Predict2's `Timesteps`, `emb_i = σ · exp(−ln(10000) · i / half)` for
 * i = 0 .. half − 1 (divided by half, not half − 1), laid out `cat([cos, sin])` (cos first). The
 * input is σ itself (in [0, 1]), not σ · 1000.
 *
 * @module
 */

/**
 * The sinusoidal timestep features of one σ.
 *
 * @param sigma the timestep input (σ)
 * @param dim the feature count (even; the DiT's width)
 * @returns `[dim]`: cos of the half-frequencies, then sin
 * @throws Error when `dim` is not a positive even integer or σ is not finite
 *
 * @example
 * ```ts
 * import { timestepSinusoid } from "@xpu/ops/models/anima";
 * timestepSinusoid(0, 4); // Float32Array [1, 1, 0, 0]
 * ```
 */
export function timestepSinusoid(sigma: number, dim: number): Float32Array {
  if (!Number.isInteger(dim) || dim < 2 || dim % 2 !== 0) {
    throw new Error(`anima timestep: dim must be a positive even integer, got ${dim}`);
  }
  if (!Number.isFinite(sigma)) throw new Error(`anima timestep: sigma must be finite, got ${sigma}`);
  const half = dim / 2;
  const out = new Float32Array(dim);
  for (let i = 0; i < half; i++) {
    const angle = sigma * Math.exp((-Math.log(10000) * i) / half);
    out[i] = Math.cos(angle);
    out[half + i] = Math.sin(angle);
  }
  return out;
}
