/**
 * Anima's sampler: the flow-matching σ schedule, the Euler step and classifier-free guidance, as
 * sd-scripts' `hunyuan_image_utils` and `anima_minimal_inference.py` define them (diffusers' Anima
 * pipeline computes the same numbers).
 *
 * - Schedule: `s = linspace(1, 0, N + 1)`, `σ = shift · s / (1 + (shift − 1) · s)`; the last σ is 0.
 *   With shift 3 this is diffusers' `linspace(1, 1/N, N)` shifted by 3, plus a final 0.
 * - The DiT's timestep input is σ itself: the scheduler's timesteps are σ · 1000 and the pipeline
 *   divides them by 1000 again.
 * - The model predicts a velocity (noise − x0); Euler: `x ← x + (σ_{i+1} − σ_i) · v`.
 * - Guidance from the unconditional side: `v = v_uncond + cfg · (v_cond − v_uncond)`; both passes
 *   see the same x and σ, only the context differs. cfg = 1 is the conditional prediction alone.
 *
 * The GPU path (pipeline.ts) folds guidance and the Euler step into one product of the batched
 * velocities with two per-step coefficients, {@link guidedEulerCoefficients}.
 *
 * @module
 */

/** The flow shift of Anima's reference schedules (diffusers, ComfyUI-family front ends, the goldens). */
export const DEFAULT_SHIFT = 3;

/**
 * The σ schedule: N + 1 values from 1 down to 0, each rounded to f32 (as torch's float32 tensor).
 *
 * @param steps sampling steps N (>= 1)
 * @param shift the flow shift (> 0; 3 for Anima)
 * @returns `[N + 1]` sigmas, the last 0
 * @throws Error naming `steps` or `shift` when out of range
 *
 * @example
 * ```ts
 * import { sigmaSchedule } from "@xpu/ops/models/anima";
 * sigmaSchedule(3); // Float32Array [1, 0.857142865657806, 0.6000000238418579, 0]
 * ```
 */
export function sigmaSchedule(steps: number, shift: number = DEFAULT_SHIFT): Float32Array {
  if (!Number.isInteger(steps) || steps < 1) {
    throw new Error(`anima sampler: steps must be an integer >= 1, got ${steps}`);
  }
  if (!(shift > 0) || !Number.isFinite(shift)) throw new Error(`anima sampler: shift must be > 0, got ${shift}`);
  const out = new Float32Array(steps + 1);
  for (let i = 0; i <= steps; i++) {
    const s = 1 - i / steps;
    out[i] = (shift * s) / (1 + (shift - 1) * s);
  }
  return out;
}

/**
 * Classifier-free guidance: `v_uncond + cfg · (v_cond − v_uncond)` (reference, host arrays).
 *
 * @param vCond the conditional velocity
 * @param vUncond the unconditional velocity (same length)
 * @param cfg the guidance scale
 * @returns the guided velocity
 *
 * @example
 * ```ts
 * import { guide } from "@xpu/ops/models/anima";
 * guide(new Float32Array([2]), new Float32Array([1]), 4); // Float32Array [5]: 1 + 4 (2 - 1)
 * ```
 */
export function guide(vCond: Float32Array, vUncond: Float32Array, cfg: number): Float32Array {
  if (vCond.length !== vUncond.length) {
    throw new Error(`anima sampler: vUncond has ${vUncond.length} values, vCond ${vCond.length}`);
  }
  return vCond.map((c, i) => vUncond[i] + cfg * (c - vUncond[i]));
}

/**
 * One Euler step, `x + (σ_next − σ) · v` (reference, host arrays).
 *
 * @param x the latent
 * @param v the velocity (same length)
 * @param sigma σ of this step
 * @param sigmaNext σ of the next step
 * @returns the next latent
 *
 * @example
 * ```ts
 * import { eulerStep } from "@xpu/ops/models/anima";
 * eulerStep(new Float32Array([1]), new Float32Array([2]), 1, 0.75); // Float32Array [0.5]
 * ```
 */
export function eulerStep(x: Float32Array, v: Float32Array, sigma: number, sigmaNext: number): Float32Array {
  if (x.length !== v.length) throw new Error(`anima sampler: v has ${v.length} values, x ${x.length}`);
  return x.map((xi, i) => xi + (sigmaNext - sigma) * v[i]);
}

/**
 * Guidance and the Euler step as one linear combination of the batched velocities:
 * `x_next = x + a · v_cond + b · v_uncond` with `a = dσ · cfg` and `b = dσ · (1 − cfg)`,
 * `dσ = σ_next − σ` (with cfg = 1, `b` is 0 and the unconditional pass is not run).
 *
 * @param sigma σ of this step
 * @param sigmaNext σ of the next step
 * @param cfg the guidance scale
 * @returns `[a, b]`
 *
 * @example
 * ```ts
 * import { guidedEulerCoefficients } from "@xpu/ops/models/anima";
 * guidedEulerCoefficients(1, 0.75, 4); // [-1, 0.75]: x_next = x - v_cond + 0.75 v_uncond
 * ```
 */
export function guidedEulerCoefficients(sigma: number, sigmaNext: number, cfg: number): [number, number] {
  const d = sigmaNext - sigma;
  return [d * cfg, d * (1 - cfg)];
}
