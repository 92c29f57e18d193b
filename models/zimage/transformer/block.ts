/**
 * One Z-Image transformer block (upstream's `ZImageTransformerBlock`), as steps of library ops:
 *
 * ```
 * x += g_msa · RMSNorm_attn2(Attn(RMSNorm_attn1(x) · (1 + s_msa)))
 * x += g_mlp · RMSNorm_ffn2(FFN(RMSNorm_ffn1(x) · (1 + s_mlp)))
 * ```
 *
 * Sandwich RMSNorms (eps 1e-5), attention with no bias, MHA, QK-norm (one `[D]` weight shared by the
 * heads) before adjacent-pair multi-axis RoPE, non-causal with no mask (pad tokens take part; q, k and v
 * stay token-major, flash_attention's `BLHD` layout), then FFN `w2(silu(w1 x) ⊙ w3 x)` (the SiLU in
 * w1's epilogue, the product in w3's as a gate). The modulation enters through the norms' weights: `(1 + s)` and the
 * gate `g` are per-channel factors of a norm's output, so the block is handed four `[d]` weights,
 * `attn1 = w_attn1 ⊙ (1 + s_msa)`, `attn2 = w_attn2 ⊙ tanh(g_msa)` and the same for the FFN
 * (modulation.ts computes them each step); a context-refiner block is handed its plain norm weights
 * (scale 1, gate 1).
 *
 * With int8 activations (the scratch's `int8`, q8 or q4g128 weights), each projection's input is
 * quantized per row once (q, k and v share the normed h; w1 and w3 share theirs) and the products run
 * on integer dot products, their epilogues unchanged (models/linear.ts).
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../../harness/device.ts";
import type { TensorStore } from "../../../llm/safetensors.ts";
import { axpyInplacePlan } from "../../../ops/axpy/mod.ts";
import { flashAttentionPlan } from "../../../ops/flash_attention/mod.ts";
import { rmsnormPlan } from "../../../ops/rmsnorm/mod.ts";
import { ropeAxesPlan } from "../../../ops/rope/mod.ts";
import { freeOnFailure } from "../../loading.ts";
import { type DitConfig, ditSizes } from "../config.ts";
import {
  allocInt8Scratch,
  destroyInt8Scratch,
  type Int8Rows,
  type Int8Scratch,
  type Linear,
  linearDispatch,
  type LinearFormat,
  linearTensors,
  quantizeRowsDispatch,
  uploadLinear,
} from "../../linear.ts";
import type { Steps } from "../program.ts";

/** A block's weights on the GPU. */
export interface BlockWeights {
  /** q, k, v and out projections (no bias). */
  toQ: Linear;
  /** See toQ. */
  toK: Linear;
  /** See toQ. */
  toV: Linear;
  /** See toQ. */
  toOut: Linear;
  /** QK-norm weights, `[D]`. */
  normQ: GpuTensor;
  /** See normQ. */
  normK: GpuTensor;
  /** FFN: w1 (gate), w3 (up), w2 (down). */
  w1: Linear;
  /** See w1. */
  w2: Linear;
  /** See w1. */
  w3: Linear;
}

/** The four norm weights a block reads: the plain ones, or modulation.ts's products. */
export interface BlockNorms {
  /** Before attention, `[d]`. */
  attn1: GpuTensor;
  /** After attention (with the gate), `[d]`. */
  attn2: GpuTensor;
  /** Before the FFN, `[d]`. */
  ffn1: GpuTensor;
  /** After the FFN (with the gate), `[d]`. */
  ffn2: GpuTensor;
}

/**
 * The checkpoint names of a block's tensors (under its prefix, e.g. `layers.3.`), with their shapes.
 *
 * @param config the DiT config
 * @param modulated whether the block has adaLN (noise refiner and main layers)
 * @returns name and shape of each tensor
 */
export function blockTensors(config: DitConfig, modulated: boolean): { name: string; shape: number[] }[] {
  const { dim } = config;
  const { headDim, ffnHidden, adaln } = ditSizes(config);
  const out = [
    ...["to_q", "to_k", "to_v", "to_out.0"].map((n) => ({ name: `attention.${n}.weight`, shape: [dim, dim] })),
    { name: "attention.norm_q.weight", shape: [headDim] },
    { name: "attention.norm_k.weight", shape: [headDim] },
    { name: "feed_forward.w1.weight", shape: [ffnHidden, dim] },
    { name: "feed_forward.w2.weight", shape: [dim, ffnHidden] },
    { name: "feed_forward.w3.weight", shape: [ffnHidden, dim] },
    ...["attention_norm1", "ffn_norm1", "attention_norm2", "ffn_norm2"].map((n) => ({
      name: `${n}.weight`,
      shape: [dim],
    })),
  ];
  if (modulated) {
    out.push({ name: "adaLN_modulation.0.weight", shape: [4 * dim, adaln] });
    out.push({ name: "adaLN_modulation.0.bias", shape: [4 * dim] });
  }
  return out;
}

/**
 * Uploads a block's projections and QK-norm weights (the norm weights and the adaLN are modulation.ts's).
 *
 * @param gpu the device
 * @param store the block's tensors (a store scoped to its prefix)
 * @param config the DiT config
 * @param label for messages
 * @param format the projections' format
 * @returns the weights
 */
export async function loadBlock(
  gpu: ResidentDevice,
  store: TensorStore,
  config: DitConfig,
  label: string,
  format: LinearFormat = "f32",
): Promise<BlockWeights> {
  const { dim } = config;
  const { ffnHidden } = ditSizes(config);
  // A load that fails halfway (a read, a quantization) frees what it uploaded.
  return await freeOnFailure(async (keep) => {
    const rows = async (name: string, N: number, K: number) =>
      keep(
        await uploadLinear(gpu, await store.readFloat32(`${name}.weight`), N, K, { label: `${label}.${name}`, format }),
      );
    const norm = async (name: string, as: string) => keep(gpu.upload(await store.readFloat32(name), `${label}.${as}`));
    return {
      toQ: await rows("attention.to_q", dim, dim),
      toK: await rows("attention.to_k", dim, dim),
      toV: await rows("attention.to_v", dim, dim),
      toOut: await rows("attention.to_out.0", dim, dim),
      normQ: await norm("attention.norm_q.weight", "norm_q"),
      normK: await norm("attention.norm_k.weight", "norm_k"),
      w1: await rows("feed_forward.w1", ffnHidden, dim),
      w2: await rows("feed_forward.w2", dim, ffnHidden),
      w3: await rows("feed_forward.w3", ffnHidden, dim),
    };
  });
}

/**
 * A block's tensors in a fixed order (each projection's weight and scales, then the QK-norm weights):
 * what streaming copies into a resident slot.
 *
 * @param w the block's weights
 * @returns its tensors
 */
export function blockTensorsOf(w: BlockWeights): GpuTensor[] {
  return [...[w.toQ, w.toK, w.toV, w.toOut, w.w1, w.w2, w.w3].flatMap(linearTensors), w.normQ, w.normK];
}

/**
 * Frees a block's tensors.
 *
 * @param w the block's weights
 */
export function destroyBlock(w: BlockWeights): void {
  for (const t of blockTensorsOf(w)) t.buffer.destroy();
}

/** Work tensors every block shares, sized for the longest sequence. */
export interface BlockScratch {
  /** `[tokens, d]` each. */
  h: GpuTensor;
  /** See h. */
  q: GpuTensor;
  /** See h. */
  k: GpuTensor;
  /** See h. */
  v: GpuTensor;
  /** See h. */
  t1: GpuTensor;
  /** See h. */
  t2: GpuTensor;
  /** `[tokens, ffnHidden]` each. */
  f1: GpuTensor;
  /** See f1. */
  f2: GpuTensor;
  /** The attention's mask binding, unused (one element). */
  noMask: GpuTensor;
  /** RoPE tables of one head: each pair's axis (u32) and inverse frequency. */
  pairAxis: GpuTensor;
  /** See pairAxis. */
  invFreq: GpuTensor;
  /** With int8 activations: a projection's input quantized per row, up to `[tokens, ffnHidden]`. */
  int8?: Int8Scratch;
}

/**
 * Allocates the blocks' work tensors.
 *
 * @param gpu the device
 * @param config the DiT config
 * @param tokens the longest sequence a block will see
 * @param rope the RoPE tables (ropeAxes's pair axes and inverse frequencies of one head)
 * @param int8 whether the projections take int8 activations (their inputs' codes and scales)
 * @returns the tensors
 */
export function allocBlockScratch(
  gpu: ResidentDevice,
  config: DitConfig,
  tokens: number,
  rope: { axis: Uint32Array; invFreq: Float32Array },
  int8 = false,
): BlockScratch {
  const d = tokens * config.dim, f = tokens * ditSizes(config).ffnHidden;
  const a = (n: number, label: string) => gpu.alloc("f32", n, `dit scratch ${label}`);
  return {
    h: a(d, "h"),
    q: a(d, "q"),
    k: a(d, "k"),
    v: a(d, "v"),
    t1: a(d, "t1"),
    t2: a(d, "t2"),
    f1: a(f, "f1"),
    f2: a(f, "f2"),
    noMask: a(1, "no mask"),
    pairAxis: gpu.upload(rope.axis, "rope pair axes"),
    invFreq: gpu.upload(rope.invFreq, "rope inverse frequencies"),
    ...(int8 ? { int8: allocInt8Scratch(gpu, tokens, ditSizes(config).ffnHidden, "dit scratch int8") } : {}),
  };
}

/**
 * Frees the work tensors.
 *
 * @param s the tensors
 */
export function destroyBlockScratch(s: BlockScratch): void {
  const { int8, ...tensors } = s;
  for (const t of Object.values(tensors)) t.buffer.destroy();
  if (int8) destroyInt8Scratch(int8);
}

/**
 * Appends one block over the first `tokens` rows of `x` (updated in place).
 *
 * @param steps where the dispatches go
 * @param gpu the device
 * @param config the DiT config
 * @param w the block's weights
 * @param norms its four norm weights (modulated or plain)
 * @param s the shared work tensors
 * @param x the token stream, `[>= tokens, d]`
 * @param tokens rows of x the block runs on
 * @param positions RoPE positions `[tokens, 3]` (i32)
 * @param capture where a test wants the attention's output (after to_out), if anywhere
 */
export function blockSteps(
  steps: Steps,
  gpu: ResidentDevice,
  config: DitConfig,
  w: BlockWeights,
  norms: BlockNorms,
  s: BlockScratch,
  x: GpuTensor,
  tokens: number,
  positions: GpuTensor,
  capture?: (attention: GpuTensor) => void,
): void {
  const { dim, nHeads: H, normEps: eps, axesDims, ropeTheta } = config;
  const { headDim: D } = ditSizes(config);
  const N = tokens;
  const norm = (src: GpuTensor, weight: GpuTensor, out: GpuTensor, rows = N, cols = dim) =>
    steps.run(rmsnormPlan(gpu, { rows, cols, groups: 1, eps }), [src, weight, out]);
  const rope = ropeAxesPlan(gpu, { tokens: N, heads: H, headDim: D, axesDims, theta: ropeTheta });
  // A projection's input: as it is, or quantized per row into the int8 scratch (read by the products
  // that follow, before the next quantization overwrites it).
  const input = (src: GpuTensor, K: number, readers: Linear[]): GpuTensor | Int8Rows => {
    if (!s.int8) return src;
    const { dispatch, rows } = quantizeRowsDispatch(gpu, N, K, src, s.int8, readers.map((l) => l.label).join(", "));
    steps.dispatch(dispatch);
    return rows;
  };

  // Attention: q, k, v token-major [N, H, D] as the projections write them.
  norm(x, norms.attn1, s.h);
  const h = input(s.h, dim, [w.toQ, w.toK, w.toV]);
  steps.dispatch(linearDispatch(gpu, w.toQ, N, h, s.q));
  steps.dispatch(linearDispatch(gpu, w.toK, N, h, s.k));
  steps.dispatch(linearDispatch(gpu, w.toV, N, h, s.v));
  norm(s.q, w.normQ, s.t1, N * H, D);
  steps.run(rope, [s.t1, positions, s.pairAxis, s.invFreq, s.q]);
  norm(s.k, w.normK, s.t1, N * H, D);
  steps.run(rope, [s.t1, positions, s.pairAxis, s.invFreq, s.k]);
  const attention = flashAttentionPlan(gpu, { B: 1, H, L: N, S: N, D, layout: "BLHD" });
  steps.run(attention, [s.q, s.k, s.v, s.noMask, s.t1]);
  steps.dispatch(linearDispatch(gpu, w.toOut, N, input(s.t1, dim, [w.toOut]), s.t2));
  capture?.(s.t2);
  norm(s.t2, norms.attn2, s.t1);
  steps.run(axpyInplacePlan(gpu, { n: N * dim, alpha: 1 }), [s.t1, x]);

  // Feed-forward: silu(w1 h) in w1's epilogue, times w3 h in w3's.
  norm(x, norms.ffn1, s.h);
  const hf = input(s.h, dim, [w.w1, w.w3]);
  steps.dispatch(linearDispatch(gpu, w.w1, N, hf, s.f1, { activation: "silu" }));
  steps.dispatch(linearDispatch(gpu, w.w3, N, hf, s.f2, { gate: s.f1 }));
  steps.dispatch(linearDispatch(gpu, w.w2, N, input(s.f2, ditSizes(config).ffnHidden, [w.w2]), s.q));
  norm(s.q, norms.ffn2, s.t1);
  steps.run(axpyInplacePlan(gpu, { n: N * dim, alpha: 1 }), [s.t1, x]);
}
