/**
 * Anima's sampler: the flow-matching σ schedule, classifier-free guidance and three samplers, Euler
 * (sd-scripts' `hunyuan_image_utils` and `anima_minimal_inference.py`; diffusers' Anima pipeline
 * computes the same numbers) and ComfyUI's `res_multistep` and `er_sde`, as ComfyUI defines them
 * for a flow model (`comfy/k_diffusion/sampling.py`; ComfyUI runs Anima as `ModelType.FLOW`, i.e.
 * `ModelSamplingDiscreteFlow` with the `CONST` parameterisation).
 *
 * - Schedule: `s = linspace(1, 0, N + 1)`, `σ = shift · s / (1 + (shift − 1) · s)`; the last σ is 0.
 *   With shift 3 this is diffusers' `linspace(1, 1/N, N)` shifted by 3, plus a final 0.
 * - The shift defaults to 3 ({@link DEFAULT_SHIFT}): the oracle pack's README and goldens, diffusers'
 *   and ComfyUI's Anima schedules. sd-scripts' reference script, `anima_minimal_inference.py`, has
 *   its own default, `--flow_shift 5.0` (with `--guidance_scale 3.5` and `--infer_steps 50`, which
 *   this port's pipeline does take as its defaults); pass `shift: 5` to match that script's runs.
 * - The DiT's timestep input is σ itself: the scheduler's timesteps are σ · 1000 and the pipeline
 *   divides them by 1000 again.
 * - The model predicts a velocity (noise − x0); Euler: `x ← x + (σ_{i+1} − σ_i) · v`.
 * - Guidance from the unconditional side: `v = v_uncond + cfg · (v_cond − v_uncond)`; both passes
 *   see the same x and σ, only the context differs. cfg = 1 is the conditional prediction alone.
 * - The denoised latent (ComfyUI's `denoised`, `CONST.calculate_denoised`): `D = x − σ · v`.
 *   ComfyUI guides D rather than v; D is affine in v with the same x and σ for both passes, so
 *   `D_uncond + cfg · (D_cond − D_uncond)` is `x − σ · v` of the guided v.
 * - `res_multistep` ({@link sampleResMultistep}, ComfyUI's `sample_res_multistep`: `res_multistep`
 *   with `eta = 0`, no CFG++, so no noise is added): in `t = −log σ`, the first step and a step to
 *   σ = 0 are Euler steps, `x + (σ_{i+1} − σ_i) · (x − D_i) / σ_i`; every other step is the
 *   second-order exponential multistep step of arXiv 2308.02157,
 *   `x ← e^{−h} x + h (b1 D_i + b2 D_{i−1})`, with `h = t_{i+1} − t_i`,
 *   `c2 = (t_{i−1} − t_i) / h` (negative: ComfyUI's `(t_prev − t_old) / h`, where with eta = 0 its
 *   `t_old`, the previous step's target, is `t_i`), `φ1(z) = expm1(z) / z`, `φ2(z) = (φ1(z) − 1) / z`,
 *   `b1 = φ1(−h) − φ2(−h) / c2`, `b2 = φ2(−h) / c2` (a NaN of either becomes 0, as torch's
 *   `nan_to_num`). A constant D is integrated exactly, and the step is exact for a D linear in t.
 * - `er_sde` ({@link sampleErSde}, ComfyUI's `sample_er_sde`: ER-SDE-Solver-3 of arXiv 2309.06169
 *   with `s_noise = 1` and `max_stage = 3`; the model's `noise_scale` is 1 for Anima). For a flow
 *   model a first σ of 1 is replaced by the schedule's σ at 1e-4 of the way
 *   (`offset_first_sigma_for_snr`: `shift · 0.9999 / (1 + (shift − 1) · 0.9999)`, rounded to f32, and
 *   the model is evaluated there), see {@link erSdeSigmas}. With `λ = σ / (1 − σ)` (ComfyUI's
 *   `er_lambda`, e^{−half-log-SNR}), `α = 1 − σ`, the noise scaler `ns(λ) = λ (e^{λ^0.3} + 10)` and
 *   `r = ns(λ_{i+1}) / ns(λ_i)`: a step to σ = 0 returns D_i; otherwise stage 1 is
 *   `x ← (α_{i+1} / α_i) r x + α_{i+1} (1 − r) D_i`; from the second step stage 2 adds
 *   `α_{i+1} (Δλ + S ns(λ_{i+1})) D'` with `Δλ = λ_{i+1} − λ_i`, `D' = (D_i − D_{i−1}) / (λ_i − λ_{i−1})`
 *   and S a 200-point left Riemann sum of `1 / ns` over `[λ_{i+1}, λ_i]` (starting at λ_{i+1});
 *   from the third step stage 3 adds `α_{i+1} (Δλ² / 2 + S_u ns(λ_{i+1})) D''` with
 *   `D'' = (D' − D'_{i−1}) / ((λ_i − λ_{i−2}) / 2)` and S_u the same sum of `(λ − λ_i) / ns(λ)`;
 *   then the noise `α_{i+1} · sqrt(λ_{i+1}² − λ_i² r²) · ξ_i`, ξ_i standard normal. ComfyUI draws ξ_i
 *   with torch's `randn` from a generator on the latent's device (CUDA's, on a GPU); the pipeline
 *   draws them from its own seeded Gaussian (models/noise.ts, see pipeline.ts), as it does the
 *   initial latent, so an er_sde image is never ComfyUI's image for the same seed, only the same
 *   sampler.
 *
 * Precision: ComfyUI computes these coefficients in float32 from float32 σs; here they are computed
 * in f64 from the same f32 σs (a coefficient may differ in its last f32 bits; φ2 of a small h loses
 * digits to cancellation in f32, not here).
 *
 * The reference loops ({@link sampleEuler}, {@link sampleResMultistep}, {@link sampleErSde}) work on
 * host arrays in f64 with a denoiser callback. The GPU path (pipeline.ts) uses the same steps
 * written as linear combinations ({@link samplerSteps}): `x_{i+1} = c_v · v_i + c_0 · D_i +
 * c_1 · D_{i−1} + c_2 · D_{i−2} + c_ξ · ξ_i`, with `D_i = x_i − σ_i · v_i` itself a combination of
 * x_i and the batched velocities; Euler keeps its one product of the velocities with two per-step
 * coefficients ({@link guidedEulerCoefficients}).
 *
 * @module
 */

/**
 * The flow shift of Anima's reference schedules (diffusers, ComfyUI-family front ends, the oracle's
 * goldens): 3. sd-scripts' `anima_minimal_inference.py` defaults to 5.
 */
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

/** A sampler of {@link ANIMA_SAMPLERS}. */
export type AnimaSampler = "euler" | "res_multistep" | "er_sde";

/** The samplers the pipeline runs, by ComfyUI's names. */
export const ANIMA_SAMPLERS: readonly AnimaSampler[] = ["euler", "res_multistep", "er_sde"];

/**
 * A denoiser for the reference loops: D(x, σ), the model's estimate of the clean latent at σ
 * (for the DiT, `x − σ · v` of the guided velocity).
 *
 * @param x the latent (the loop's own f64 array: copy it to keep it)
 * @param sigma the σ the model is evaluated at
 * @param step the step's index
 * @returns D, the same length as x
 */
export type Denoiser = (
  x: Float64Array,
  sigma: number,
  step: number,
) => ArrayLike<number> | Promise<ArrayLike<number>>;

/**
 * The denoised latent of a flow model, `x − σ · v` (ComfyUI's `CONST.calculate_denoised`).
 *
 * @param x the latent
 * @param v the (guided) velocity, the same length
 * @param sigma σ
 * @returns D, f64
 *
 * @example
 * ```ts
 * import { denoisedLatent } from "@xpu/ops/models/anima";
 * denoisedLatent([1], [2], 0.25); // Float64Array [0.5]
 * ```
 */
export function denoisedLatent(x: ArrayLike<number>, v: ArrayLike<number>, sigma: number): Float64Array {
  if (x.length !== v.length) throw new Error(`anima sampler: v has ${v.length} values, x ${x.length}`);
  return Float64Array.from(x, (xi, i) => xi - sigma * v[i]);
}

function checkSigmas(sigmas: ArrayLike<number>): void {
  if (sigmas.length < 2 || sigmas[sigmas.length - 1] !== 0) {
    throw new Error(`anima sampler: sigmas must be at least two values ending in 0, got ${sigmas.length} values`);
  }
  for (let i = 0; i + 1 < sigmas.length; i++) {
    if (!(sigmas[i] > sigmas[i + 1] && sigmas[i] <= 1)) {
      throw new Error(
        `anima sampler: sigmas must fall strictly from at most 1, got ${sigmas[i]} then ${sigmas[i + 1]}`,
      );
    }
  }
}

async function callDenoiser(
  denoiser: Denoiser,
  x: Float64Array,
  sigma: number,
  step: number,
): Promise<ArrayLike<number>> {
  const d = await denoiser(x, sigma, step);
  if (d.length !== x.length) throw new Error(`anima sampler: the denoiser gave ${d.length} values for ${x.length}`);
  return d;
}

/**
 * The Euler sampler (reference, f64): `x ← x + (σ_{i+1} − σ_i) · (x − D_i) / σ_i`, ComfyUI's
 * `sample_euler` without churn (for the DiT's D this is {@link eulerStep} with the guided velocity).
 *
 * @param x the initial latent
 * @param sigmas the schedule, ending in 0 ({@link sigmaSchedule})
 * @param denoiser D(x, σ)
 * @returns the final latent, f64
 *
 * @example
 * ```ts
 * import { sampleEuler } from "@xpu/ops/models/anima";
 * await sampleEuler([1], [1, 0.5, 0], () => [0.25]); // Float64Array [0.25]: the last step returns D
 * ```
 */
export async function sampleEuler(
  x: ArrayLike<number>,
  sigmas: ArrayLike<number>,
  denoiser: Denoiser,
): Promise<Float64Array> {
  checkSigmas(sigmas);
  let cur: Float64Array = Float64Array.from(x);
  for (let i = 0; i + 1 < sigmas.length; i++) {
    const d = await callDenoiser(denoiser, cur, sigmas[i], i);
    const s = sigmas[i], dt = sigmas[i + 1] - s;
    cur = cur.map((xi, j) => xi + dt * (xi - d[j]) / s);
  }
  return cur;
}

/**
 * res_multistep's weights of a multistep step from σ_i to σ_{i+1}, the previous step at σ_{i−1}:
 * `x ← e^{−h} x + h (b1 D_i + b2 D_{i−1})` (see the module doc).
 */
function resMultistepWeights(
  sigmaPrev: number,
  sigma: number,
  sigmaNext: number,
): { h: number; b1: number; b2: number } {
  const t = -Math.log(sigma), tNext = -Math.log(sigmaNext), tPrev = -Math.log(sigmaPrev);
  const h = tNext - t;
  const c2 = (tPrev - t) / h;
  const phi1 = (z: number) => Math.expm1(z) / z;
  const phi2 = (z: number) => (phi1(z) - 1) / z;
  const nanToZero = (v: number) => Number.isNaN(v) ? 0 : v;
  return { h, b1: nanToZero(phi1(-h) - phi2(-h) / c2), b2: nanToZero(phi2(-h) / c2) };
}

/**
 * One res_multistep step (reference, f64): Euler without a previous step or to σ = 0, otherwise
 * `e^{−h} x + h (b1 D + b2 D_prev)` (the module doc gives h, b1 and b2).
 *
 * @param x the latent at σ
 * @param d D at σ
 * @param previous the previous step's D and σ (absent at the first step)
 * @param sigma σ of this step
 * @param sigmaNext σ of the next step
 * @returns the next latent, f64
 *
 * @example
 * ```ts
 * import { resMultistepStep } from "@xpu/ops/models/anima";
 * // A constant D is integrated exactly: x_next = (σn / σ) x + (1 − σn / σ) D.
 * resMultistepStep([1], [3], { denoised: [3], sigma: 0.8 }, 0.5, 0.25); // Float64Array [2] (to rounding)
 * ```
 */
export function resMultistepStep(
  x: ArrayLike<number>,
  d: ArrayLike<number>,
  previous: { denoised: ArrayLike<number>; sigma: number } | undefined,
  sigma: number,
  sigmaNext: number,
): Float64Array {
  if (d.length !== x.length || (previous && previous.denoised.length !== x.length)) {
    throw new Error(`anima sampler: D and the previous D must have x's ${x.length} values`);
  }
  if (previous === undefined || sigmaNext === 0) {
    return Float64Array.from(x, (xi, j) => xi + (sigmaNext - sigma) * (xi - d[j]) / sigma);
  }
  const { h, b1, b2 } = resMultistepWeights(previous.sigma, sigma, sigmaNext);
  const decay = Math.exp(-h);
  return Float64Array.from(x, (xi, j) => decay * xi + h * (b1 * d[j] + b2 * previous.denoised[j]));
}

/**
 * ComfyUI's `res_multistep` sampler (`sample_res_multistep`, reference, f64): {@link resMultistepStep}
 * at every step, each step's D kept for the next.
 *
 * @param x the initial latent
 * @param sigmas the schedule, ending in 0
 * @param denoiser D(x, σ)
 * @returns the final latent, f64
 *
 * @example
 * ```ts
 * import { sampleResMultistep, sigmaSchedule } from "@xpu/ops/models/anima";
 * await sampleResMultistep([1], sigmaSchedule(4), () => [0.5]); // Float64Array [0.5]
 * ```
 */
export async function sampleResMultistep(
  x: ArrayLike<number>,
  sigmas: ArrayLike<number>,
  denoiser: Denoiser,
): Promise<Float64Array> {
  checkSigmas(sigmas);
  let cur: Float64Array = Float64Array.from(x);
  let previous: { denoised: ArrayLike<number>; sigma: number } | undefined;
  for (let i = 0; i + 1 < sigmas.length; i++) {
    const d = await callDenoiser(denoiser, cur, sigmas[i], i);
    cur = resMultistepStep(cur, d, previous, sigmas[i], sigmas[i + 1]);
    previous = { denoised: d, sigma: sigmas[i] };
  }
  return cur;
}

/** The points of er_sde's integrals over `[λ_{i+1}, λ_i]` (ComfyUI's `num_integration_points`). */
export const ER_SDE_INTEGRATION_POINTS = 200;

/**
 * er_sde's default noise scaler, `λ (e^{λ^0.3} + 10)` (ComfyUI's `default_er_sde_noise_scaler`).
 *
 * @param lambda λ = σ / (1 − σ), >= 0
 * @returns the scaled λ
 *
 * @example
 * ```ts
 * import { erSdeNoiseScaler } from "@xpu/ops/models/anima";
 * erSdeNoiseScaler(1); // 12.718281828459045: 1 · (e + 10)
 * ```
 */
export function erSdeNoiseScaler(lambda: number): number {
  return lambda * (Math.exp(lambda ** 0.3) + 10);
}

/**
 * The σs er_sde runs a schedule at: a first σ of 1 or more becomes the flow schedule's σ at 1e-4 of
 * the way (`shift · 0.9999 / (1 + (shift − 1) · 0.9999)`, rounded to f32: ComfyUI's
 * `offset_first_sigma_for_snr` with `ModelSamplingDiscreteFlow.percent_to_sigma(1e-4)`), where
 * λ = σ / (1 − σ) is finite; the others are kept.
 *
 * @param sigmas the schedule
 * @param shift the flow shift the schedule was made with
 * @returns a copy, its first σ offset
 *
 * @example
 * ```ts
 * import { erSdeSigmas, sigmaSchedule } from "@xpu/ops/models/anima";
 * erSdeSigmas(sigmaSchedule(2), 3)[0]; // 0.9999666810035706: f32(3 · 0.9999 / (1 + 2 · 0.9999))
 * ```
 */
export function erSdeSigmas(sigmas: ArrayLike<number>, shift: number): Float64Array {
  const out = Float64Array.from(sigmas);
  if (out.length > 1 && out[0] >= 1) {
    const s = 1 - 1e-4;
    out[0] = Math.fround((shift * s) / (1 + (shift - 1) * s));
  }
  return out;
}

/** er_sde's weights of step i (σ_{i+1} > 0) on the offset σs and their λs: see the module doc. */
function erSdeWeights(sigmas: ArrayLike<number>, lambdas: ArrayLike<number>, i: number, sNoise: number): {
  stage: number;
  x: number;
  d: number;
  d1: number;
  d2: number;
  noise: number;
} {
  const ls = lambdas[i], lt = lambdas[i + 1];
  const alphaS = 1 - sigmas[i], alphaT = 1 - sigmas[i + 1];
  const r = erSdeNoiseScaler(lt) / erSdeNoiseScaler(ls);
  const stage = Math.min(3, i + 1);
  const dt = lt - ls, step = -dt / ER_SDE_INTEGRATION_POINTS;
  let s = 0, su = 0;
  for (let k = 0; k < ER_SDE_INTEGRATION_POINTS; k++) {
    const at = lt + k * step, scaled = erSdeNoiseScaler(at);
    s += 1 / scaled;
    su += (at - ls) / scaled;
  }
  s *= step;
  su *= step;
  const variance = lt * lt - ls * ls * r * r;
  return {
    stage,
    x: (alphaT / alphaS) * r,
    d: alphaT * (1 - r),
    d1: alphaT * (dt + s * erSdeNoiseScaler(lt)),
    d2: alphaT * ((dt * dt) / 2 + su * erSdeNoiseScaler(lt)),
    noise: sNoise > 0 ? alphaT * sNoise * (variance >= 0 ? Math.sqrt(variance) : 0) : 0,
  };
}

/** er_sde's λ = σ / (1 − σ) of each σ (0 at σ = 0). */
function erSdeLambdas(sigmas: ArrayLike<number>): Float64Array {
  return Float64Array.from(sigmas, (s) => s / (1 - s));
}

/** Options of {@link sampleErSde}. */
export interface ErSdeOptions {
  /** The flow shift the schedule was made with (for the first σ's offset, {@link erSdeSigmas}). */
  shift: number;
  /** Standard normal noise ξ_i of step i, the latent's length (asked for only when it is added). */
  noise: (step: number) => ArrayLike<number>;
  /** The noise's scale (default 1, ComfyUI's `s_noise`); 0 adds none. */
  sNoise?: number;
}

/**
 * ComfyUI's `er_sde` sampler (`sample_er_sde` with `max_stage` 3, reference, f64): the module doc
 * gives the stages, the noise and the first σ's offset.
 *
 * @param x the initial latent
 * @param sigmas the schedule, ending in 0 (its first σ is offset here)
 * @param denoiser D(x, σ); step 0 is evaluated at the offset σ
 * @param options shift, noise, sNoise
 * @returns the final latent, f64
 *
 * @example
 * ```ts
 * import { sampleErSde, sigmaSchedule } from "@xpu/ops/models/anima";
 * // A constant D with no noise: every stage-1 step moves x toward D; the last step returns D.
 * await sampleErSde([1], sigmaSchedule(4), () => [0.5], { shift: 3, noise: () => [0], sNoise: 0 }); // [0.5]
 * ```
 */
export async function sampleErSde(
  x: ArrayLike<number>,
  sigmas: ArrayLike<number>,
  denoiser: Denoiser,
  options: ErSdeOptions,
): Promise<Float64Array> {
  checkSigmas(sigmas);
  const sNoise = options.sNoise ?? 1;
  if (!(sNoise >= 0)) throw new Error(`anima sampler: sNoise must be >= 0, got ${sNoise}`);
  const sig = erSdeSigmas(sigmas, options.shift);
  const lambdas = erSdeLambdas(sig);
  let cur: Float64Array = Float64Array.from(x);
  let oldD: ArrayLike<number> | undefined, oldD1: Float64Array | undefined;
  for (let i = 0; i + 1 < sig.length; i++) {
    const d = await callDenoiser(denoiser, cur, sig[i], i);
    if (sig[i + 1] === 0) {
      cur = Float64Array.from(d);
    } else {
      const w = erSdeWeights(sig, lambdas, i, sNoise);
      cur = cur.map((xi, j) => w.x * xi + w.d * d[j]);
      if (w.stage >= 2) {
        const d1 = Float64Array.from(d, (dj, j) => (dj - oldD![j]) / (lambdas[i] - lambdas[i - 1]));
        cur = cur.map((xi, j) => xi + w.d1 * d1[j]);
        if (w.stage >= 3) {
          const half = (lambdas[i] - lambdas[i - 2]) / 2;
          cur = cur.map((xi, j) => xi + w.d2 * (d1[j] - oldD1![j]) / half);
        }
        oldD1 = d1;
      }
      if (sNoise > 0) {
        const xi = options.noise(i);
        if (xi.length !== cur.length) throw new Error(`anima sampler: noise(${i}) gave ${xi.length} values`);
        cur = cur.map((v, j) => v + w.noise * xi[j]);
      }
    }
    oldD = d;
  }
  return cur;
}

/**
 * One step of a sampler as the GPU path runs it: the model is evaluated at `sigma`, and with v its
 * guided velocity there, `D_i = x_i − sigma · v`,
 * `x_{i+1} = velocity · v + denoised[0] · D_i + denoised[1] · D_{i−1} + denoised[2] · D_{i−2} + noise · ξ_i`.
 */
export interface SamplerStep {
  /** σ the model is evaluated at (er_sde's first step: the offset σ). */
  sigma: number;
  /** The guided velocity's weight. */
  velocity: number;
  /** The weights of D_i, D_{i−1}, D_{i−2}. */
  denoised: [number, number, number];
  /** The weight of the step's standard normal noise ξ_i (er_sde only). */
  noise: number;
}

/**
 * Each step of a sampler over a schedule as linear combinations ({@link SamplerStep}): the same
 * arithmetic as the reference loops, rearranged (x_i = D_i + σ_i · v).
 *
 * - euler: `velocity = σ_{i+1}`, `denoised = [1, 0, 0]` (`x + (σ_{i+1} − σ_i) v`).
 * - res_multistep: Euler steps as above; a multistep step `velocity = e^{−h} σ_i` (σ_{i+1}),
 *   `denoised = [e^{−h} + h b1, h b2, 0]`.
 * - er_sde: a step to 0 `velocity = 0`, `denoised = [1, 0, 0]`; otherwise stage 1's `x`-weight
 *   times σ_i is the velocity's, and the stages' divided differences of D expand into weights of
 *   D_i, D_{i−1}, D_{i−2}.
 *
 * @param sampler the sampler
 * @param sigmas the schedule ({@link sigmaSchedule}), ending in 0
 * @param options `shift` (er_sde's first σ; default {@link DEFAULT_SHIFT}), `sNoise` (er_sde; default 1)
 * @returns one entry per step
 * @throws Error naming `sampler` when it is not one of {@link ANIMA_SAMPLERS}
 *
 * @example
 * ```ts
 * import { samplerSteps, sigmaSchedule } from "@xpu/ops/models/anima";
 * samplerSteps("euler", sigmaSchedule(1))[0]; // { sigma: 1, velocity: 0, denoised: [1, 0, 0], noise: 0 }
 * ```
 */
export function samplerSteps(
  sampler: AnimaSampler,
  sigmas: ArrayLike<number>,
  options: { shift?: number; sNoise?: number } = {},
): SamplerStep[] {
  if (!ANIMA_SAMPLERS.includes(sampler)) {
    throw new Error(`anima sampler: sampler must be one of ${ANIMA_SAMPLERS.join(", ")}, got ${String(sampler)}`);
  }
  checkSigmas(sigmas);
  const steps: SamplerStep[] = [];
  const euler = (i: number): SamplerStep => ({
    sigma: sigmas[i],
    velocity: sigmas[i + 1],
    denoised: [1, 0, 0],
    noise: 0,
  });
  if (sampler === "euler") {
    for (let i = 0; i + 1 < sigmas.length; i++) steps.push(euler(i));
  } else if (sampler === "res_multistep") {
    for (let i = 0; i + 1 < sigmas.length; i++) {
      if (i === 0 || sigmas[i + 1] === 0) {
        steps.push(euler(i));
        continue;
      }
      const { h, b1, b2 } = resMultistepWeights(sigmas[i - 1], sigmas[i], sigmas[i + 1]);
      const decay = Math.exp(-h);
      steps.push({ sigma: sigmas[i], velocity: decay * sigmas[i], denoised: [decay + h * b1, h * b2, 0], noise: 0 });
    }
  } else {
    const sNoise = options.sNoise ?? 1;
    const sig = erSdeSigmas(sigmas, options.shift ?? DEFAULT_SHIFT);
    const l = erSdeLambdas(sig);
    for (let i = 0; i + 1 < sig.length; i++) {
      if (sig[i + 1] === 0) {
        steps.push({ sigma: sig[i], velocity: 0, denoised: [1, 0, 0], noise: 0 });
        continue;
      }
      const w = erSdeWeights(sig, l, i, sNoise);
      const weights: [number, number, number] = [w.x + w.d, 0, 0];
      if (w.stage >= 2) {
        // D' = (D_i − D_{i−1}) / (λ_i − λ_{i−1})
        const g1 = w.d1 / (l[i] - l[i - 1]);
        weights[0] += g1;
        weights[1] -= g1;
      }
      if (w.stage >= 3) {
        // D'' = (D' − (D_{i−1} − D_{i−2}) / (λ_{i−1} − λ_{i−2})) / ((λ_i − λ_{i−2}) / 2)
        const g2 = w.d2 / ((l[i] - l[i - 2]) / 2);
        const a = 1 / (l[i] - l[i - 1]), b = 1 / (l[i - 1] - l[i - 2]);
        weights[0] += g2 * a;
        weights[1] -= g2 * (a + b);
        weights[2] += g2 * b;
      }
      steps.push({ sigma: sig[i], velocity: w.x * sig[i], denoised: weights, noise: w.noise });
    }
  }
  return steps;
}
