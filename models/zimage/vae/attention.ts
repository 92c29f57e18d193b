/**
 * The VAE's mid-block attention (diffusers' `Attention` with one head, as FLUX.1's AE):
 *
 * ```
 * h = GroupNorm(x) viewed as tokens [H·W, C]
 * x + to_out(softmax(q kᵀ / sqrt(C)) v)      q, k, v, to_out: Linear(C, C) with bias
 * ```
 *
 * One head whose size is the channel count (512 in the real decoder) over H·W tokens, no mask.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../../harness/device.ts";
import type { TensorStore } from "../../../llm/safetensors.ts";
import { axpyInplacePlan } from "../../../ops/axpy/mod.ts";
import { flashAttentionPlan } from "../../../ops/flash_attention/mod.ts";
import { transposePlan } from "../../../ops/transpose/mod.ts";
import { freeOnFailure } from "../../loading.ts";
import { type Linear, linearDispatch, uploadLinear } from "../../linear.ts";
import type { Steps } from "../program.ts";
import { type FeatureScratch, groupNormSteps, loadNorm, type Norm } from "./resnet.ts";

/** The attention's weights. */
export interface MidAttention {
  /** GroupNorm. */
  norm: Norm;
  /** Projections, `rows` layout, with bias. */
  q: Linear;
  /** See q. */
  k: Linear;
  /** See q. */
  v: Linear;
  /** See q. */
  out: Linear;
}

/** The attention's work tensors, `[H·W, C]` each, and the unused mask binding. */
export interface AttentionScratch {
  /** Tokens, `[HW, C]`. */
  tokens: GpuTensor;
  /** See tokens. */
  q: GpuTensor;
  /** See tokens. */
  k: GpuTensor;
  /** See tokens. */
  v: GpuTensor;
  /** See tokens. */
  o: GpuTensor;
  /** One element. */
  noMask: GpuTensor;
}

/**
 * Uploads the attention.
 *
 * @param gpu the device
 * @param store the decoder's tensors
 * @param name the module's name (`mid_block.attentions.0`)
 * @returns the weights
 */
export async function loadMidAttention(gpu: ResidentDevice, store: TensorStore, name: string): Promise<MidAttention> {
  // A load that fails halfway frees what it uploaded.
  return await freeOnFailure(async (keep) => {
    const norm = keep(await loadNorm(gpu, store, `${name}.group_norm`));
    const C = norm.C;
    const lin = async (n: string) =>
      keep(
        await uploadLinear(gpu, await store.readFloat32(`${name}.${n}.weight`), C, C, {
          bias: await store.readFloat32(`${name}.${n}.bias`),
          label: `${name}.${n}`,
        }),
      );
    return { norm, q: await lin("to_q"), k: await lin("to_k"), v: await lin("to_v"), out: await lin("to_out.0") };
  });
}

/**
 * Allocates the attention's work tensors.
 *
 * @param gpu the device
 * @param C channels
 * @param HW tokens
 * @returns the tensors
 */
export function allocAttentionScratch(gpu: ResidentDevice, C: number, HW: number): AttentionScratch {
  const a = (label: string) => gpu.alloc("f32", C * HW, `vae attention ${label}`);
  return { tokens: a("tokens"), q: a("q"), k: a("k"), v: a("v"), o: a("o"), noMask: gpu.alloc("f32", 1, "no mask") };
}

/**
 * Appends the attention with its residual: `x` `[C, H·W]` is updated in place.
 *
 * @param steps where the dispatches go
 * @param gpu the device
 * @param w the weights
 * @param HW tokens
 * @param x the feature map
 * @param s the decoder's scratch
 * @param t the attention's scratch
 */
export function midAttentionSteps(
  steps: Steps,
  gpu: ResidentDevice,
  w: MidAttention,
  HW: number,
  x: GpuTensor,
  s: FeatureScratch,
  t: AttentionScratch,
): void {
  const C = w.norm.C;
  groupNormSteps(steps, gpu, w.norm, HW, x, s.a, s);
  steps.run(transposePlan(gpu, { rows: C, cols: HW }), [s.a, t.tokens]);
  steps.dispatch(linearDispatch(gpu, w.q, HW, t.tokens, t.q));
  steps.dispatch(linearDispatch(gpu, w.k, HW, t.tokens, t.k));
  steps.dispatch(linearDispatch(gpu, w.v, HW, t.tokens, t.v));
  steps.run(flashAttentionPlan(gpu, { B: 1, H: 1, L: HW, S: HW, D: C }), [t.q, t.k, t.v, t.noMask, t.o]);
  steps.dispatch(linearDispatch(gpu, w.out, HW, t.o, t.q));
  steps.run(transposePlan(gpu, { rows: HW, cols: C }), [t.q, s.a]);
  steps.run(axpyInplacePlan(gpu, { n: C * HW, alpha: 1 }), [s.a, x]);
}
