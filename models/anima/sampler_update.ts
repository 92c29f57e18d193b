/**
 * The sampler's update of the latent on the device, appended to a graph after the DiT's forward:
 * products of ops/matmul (`M = 1`, K of 1 or the batch, N the latent's length) whose `a` operands
 * are per-step coefficients the host writes before each run ({@link SamplerStep}, sampler.ts). No
 * kernel of its own.
 *
 * - euler: one accumulating product, `latent += [a, b] @ [v_cond; v_uncond]`
 *   ({@link guidedEulerCoefficients} of σ_i and σ_{i+1}, an Euler step's `velocity`).
 * - res_multistep and er_sde: `x_{i+1} = c_v · v + c_0 · D_i + c_1 · D_{i−1} + c_2 · D_{i−2} + c_ξ · ξ_i`
 *   with V = `[v_cond; v_uncond]` the DiT's output, `v = [cfg, 1 − cfg] @ V` (`[1] @ V` when
 *   cfg = 1, a batch of one) and `D_i = x_i − σ_i · v`, as
 *
 *       S      ← c_1 · P1                            P1 holds D_{i−1}
 *       S     += c_2 · P2;  S += c_ξ · ξ             (er_sde) P2 holds D_{i−2}, ξ the step's noise
 *       P2     ← P1                                  (er_sde)
 *       P1     ← −σ_i · [cfg, 1 − cfg] @ V + latent  D_i (the latent as the product's bias)
 *       latent ← c_0 · P1 + S                        (S as the bias)
 *       latent += c_v · [cfg, 1 − cfg] @ V
 *
 *   WebGPU binds no buffer both read and written in one dispatch, and a product only adds an
 *   unscaled bias, so the latent cannot be scaled in place: hence the scratch S beside the history
 *   P1 (and P2): two latent-sized buffers for res_multistep, three and the noise's for er_sde; four
 *   dispatches a step for res_multistep, seven for er_sde (the DiT's forward has hundreds). P1 and
 *   P2 start as zeros (WebGPU zeroes new buffers), and their weights are 0 until they hold a D.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { tensorView } from "../../harness/device.ts";
import { matmulPlan } from "../../ops/matmul/mod.ts";
import type { Graph } from "./graph.ts";
import { type AnimaSampler, guidedEulerCoefficients, type SamplerStep } from "./sampler.ts";

/** The per-step writes of an update appended by {@link appendSamplerUpdate}. */
export interface SamplerUpdate {
  /**
   * Writes step i's coefficients (and, for er_sde, its noise) before the program runs.
   *
   * @param step the step's coefficients
   * @param noise the step's standard normal noise, the latent's length (er_sde, when its weight is
   *   not 0)
   */
  write(step: SamplerStep, noise?: Float32Array): void;
  /** Frees the update's buffers (the graph's steps stay the graph's). */
  destroy(): void;
}

/**
 * Appends a sampler's update of `latent` to a graph, after the dispatches that wrote `velocity`.
 *
 * @param g the graph
 * @param args the sampler, the guidance scale, the batch (2 with CFG: rows cond, uncond), the
 *   latent and the DiT's velocity `[batch, latent.length]`
 * @returns the per-step writes
 */
export function appendSamplerUpdate(
  g: Graph,
  args: { sampler: AnimaSampler; cfg: number; batch: number; latent: GpuTensor; velocity: GpuTensor },
): SamplerUpdate {
  const gpu: ResidentDevice = g.gpu;
  const { sampler, cfg, batch, latent, velocity: v } = args;
  const n = latent.length;
  const unused = g.unused();
  if (sampler === "euler") {
    // latent += [a, b] @ [v_cond; v_uncond]: guidance and the Euler step in one product.
    const coefficients = gpu.alloc("f32", batch, "guided Euler coefficients");
    g.add(matmulPlan(gpu, { M: 1, N: n, K: batch, accumulate: true }), {
      a: coefficients,
      b: v,
      bias: unused,
      gate: unused,
      c: latent,
    });
    return {
      write: (step) => {
        // An Euler step (denoised [1, 0, 0]) is x + (velocity − σ) · v: velocity is σ_{i+1}.
        if (step.denoised[0] !== 1 || step.denoised[1] !== 0 || step.denoised[2] !== 0 || step.noise !== 0) {
          throw new Error("anima: the euler update takes Euler steps only (denoised [1, 0, 0], no noise)");
        }
        const [a, b] = guidedEulerCoefficients(step.sigma, step.velocity, cfg);
        gpu.device.queue.writeBuffer(coefficients.buffer, 0, new Float32Array(batch === 2 ? [a, b] : [a]));
      },
      destroy: () => coefficients.buffer.destroy(),
    };
  }
  const sde = sampler === "er_sde";
  // The coefficient vectors, each at its own aligned offset of one buffer: one write per step.
  const stride = Math.max(4, gpu.device.limits.minStorageBufferOffsetAlignment / 4);
  const slots = ["c1", "c2", "noise", "one", "sigma", "c0", "velocity"] as const;
  const coefficients = gpu.alloc("f32", stride * slots.length, "sampler coefficients");
  // A slot holds one coefficient, or the batch's two weights of the velocities (sigma, velocity).
  const slot = (name: typeof slots[number]) =>
    tensorView(coefficients, stride * slots.indexOf(name), name === "sigma" || name === "velocity" ? batch : 1);
  const owned = [coefficients];
  const buffer = (label: string) => {
    const t = gpu.alloc("f32", n, label);
    owned.push(t);
    return t;
  };
  const p1 = buffer("D_{i-1}"), s = buffer("sampler scratch");
  const p2 = sde ? buffer("D_{i-2}") : undefined, xi = sde ? buffer("sampler noise") : undefined;
  const scaled = matmulPlan(gpu, { M: 1, N: n, K: 1 });
  const accumulated = matmulPlan(gpu, { M: 1, N: n, K: 1, accumulate: true });
  const withBias = (K: number) => matmulPlan(gpu, { M: 1, N: n, K, bias: true });
  g.add(scaled, { a: slot("c1"), b: p1, c: s });
  if (p2 && xi) {
    g.add(accumulated, { a: slot("c2"), b: p2, bias: unused, gate: unused, c: s });
    g.add(accumulated, { a: slot("noise"), b: xi, bias: unused, gate: unused, c: s });
    g.add(scaled, { a: slot("one"), b: p1, c: p2 });
  }
  g.add(withBias(batch), { a: slot("sigma"), b: v, bias: latent, gate: unused, c: p1 });
  g.add(withBias(1), { a: slot("c0"), b: p1, bias: s, gate: unused, c: latent });
  g.add(matmulPlan(gpu, { M: 1, N: n, K: batch, accumulate: true }), {
    a: slot("velocity"),
    b: v,
    bias: unused,
    gate: unused,
    c: latent,
  });
  const values = new Float32Array(stride * slots.length);
  const set = (name: typeof slots[number], ...v: number[]) => values.set(v, stride * slots.indexOf(name));
  return {
    write: (step, noise) => {
      const [c0, c1, c2] = step.denoised;
      // Weights of v_cond and v_uncond in the guided v (batch 1: v_cond alone, cfg = 1).
      const guided = (scale: number) => batch === 2 ? [scale * cfg, scale * (1 - cfg)] : [scale];
      set("c1", c1);
      set("c2", c2);
      set("noise", step.noise);
      set("one", 1);
      set("sigma", ...guided(-step.sigma));
      set("c0", c0);
      set("velocity", ...guided(step.velocity));
      gpu.device.queue.writeBuffer(coefficients.buffer, 0, values);
      if (xi && step.noise !== 0) {
        if (!(noise instanceof Float32Array) || noise.length !== n) {
          throw new Error(`anima: er_sde's step noise must be a Float32Array of ${n} values`);
        }
        gpu.device.queue.writeBuffer(xi.buffer, 0, noise as Float32Array<ArrayBuffer>);
      }
    },
    destroy: () => owned.forEach((t) => t.buffer.destroy()),
  };
}
