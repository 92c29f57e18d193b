/**
 * Z-Image Turbo's sampler: flow-matching Euler with a shifted σ schedule, computed on the host in
 * the float32 steps upstream takes (Tongyi-MAI/Z-Image `scheduler.py` and `pipeline.py` @ c7ec135).
 *
 * - σ: `timestep_k = linspace(1000, 0, N + 1)[k]` (k < N, float64, numpy's `k·step + start`),
 *   `s = timestep_k / 1000`, `σ_k = f32(shift·s / (1 + (shift − 1)·s))`, then `σ_N = 0` (upstream sets
 *   sigma_min to 0, and the dynamic shift `mu` it computes is unused). Turbo, N = 8, shift 3:
 *   [1, 0.954545, 0.9, 0.833333, 0.75, 0.642857, 0.5, 0.3, 0].
 * - The scheduler's timestep is `f32(σ·1000)`, and the DiT is given `t = f32(f32(1000 − timestep) / 1000)`:
 *   1 − σ as float32 computes it (0 at the first step), neither σ nor the timestep.
 * - Euler: `x ← x + (σ_{k+1} − σ_k)·v` with the velocity `v = −DiT(x, t)`, so
 *   `x ← x − f32(σ_{k+1} − σ_k)·out`.
 * - No classifier-free guidance (Turbo's guidance is 0).
 *
 * @module
 */

/** The schedule of one generation. */
export interface TurboSchedule {
  /** σ_0 .. σ_N (N + 1 values, the last 0). */
  sigmas: Float32Array;
  /** The scheduler's timesteps, f32(σ_k · 1000), k < N. */
  timesteps: Float32Array;
  /** What the DiT gets at step k: f32(f32(1000 − timestep_k) / 1000). */
  modelT: Float32Array;
}

/** The most steps {@link turboSchedule} takes (the scheduler's timesteps run from 1000 to 0). */
export const TURBO_MAX_STEPS = 1000;

/**
 * The shifted σ schedule of `steps` Euler steps.
 *
 * @param steps N, an integer in [1, {@link TURBO_MAX_STEPS}] (Turbo: 8)
 * @param shift the schedule's shift (Turbo: 3), a finite number > 0
 * @returns σ, the timesteps and the DiT's t
 * @throws Error naming `steps` or `shift` when out of range
 *
 * @example
 * ```ts
 * import { turboSchedule } from "@xpu/ops/models/zimage";
 * const { sigmas, modelT } = turboSchedule(8);
 * sigmas[4]; // 0.75
 * modelT[0]; // 0
 * ```
 */
export function turboSchedule(steps: number, shift = 3): TurboSchedule {
  if (!Number.isInteger(steps) || steps < 1 || steps > TURBO_MAX_STEPS) {
    throw new Error(`turboSchedule: steps must be an integer in [1, ${TURBO_MAX_STEPS}], got ${steps}`);
  }
  if (!(typeof shift === "number" && Number.isFinite(shift) && shift > 0)) {
    throw new Error(`turboSchedule: shift must be a finite number > 0, got ${shift}`);
  }
  const sigmas = new Float32Array(steps + 1);
  const timesteps = new Float32Array(steps);
  const modelT = new Float32Array(steps);
  const step = -1000 / steps;
  for (let k = 0; k < steps; k++) {
    const s = (k * step + 1000) / 1000;
    sigmas[k] = (shift * s) / (1 + (shift - 1) * s);
    timesteps[k] = Math.fround(sigmas[k] * 1000);
    modelT[k] = Math.fround(Math.fround(1000 - timesteps[k]) / 1000);
  }
  return { sigmas, timesteps, modelT };
}

/**
 * The Euler step's multiplier of the DiT's output at step k: `x ← x + alpha·out` with
 * `alpha = −f32(σ_{k+1} − σ_k)` (the velocity is minus the output).
 *
 * @param sigmas the schedule's σ
 * @param k the step, 0 <= k < sigmas.length − 1
 * @returns alpha, >= 0 for a decreasing schedule
 *
 * @example
 * ```ts
 * import { eulerAlpha, turboSchedule } from "@xpu/ops/models/zimage";
 * eulerAlpha(turboSchedule(8).sigmas, 7); // 0.30000001192092896: the last step removes σ_7 = 0.3
 * ```
 */
export function eulerAlpha(sigmas: Float32Array, k: number): number {
  if (!Number.isInteger(k) || k < 0 || k >= sigmas.length - 1) {
    throw new Error(`eulerAlpha: k must be an integer in [0, ${sigmas.length - 2}], got ${k}`);
  }
  return -Math.fround(sigmas[k + 1] - sigmas[k]);
}
