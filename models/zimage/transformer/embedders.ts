/**
 * The DiT's inputs and output, on the GPU:
 *
 * - timestep: `t_emb = Linear(1024 → adaln)(SiLU(Linear(256 → 1024)(sinusoid)))` (the sinusoid is
 *   computed on the host, sinusoid.ts);
 * - image: patchify (latent `[16, H, W]` to tokens in row-major patch order, each token's 64 features
 *   ordered (ph, pw, c)), then `all_x_embedder.2-1` = Linear(64 → d) with bias;
 * - caption: `Linear(capDim → d, bias)(RMSNorm(capDim, eps)(cap))`;
 * - pad tokens: rows past each stream's length become the learned `x_pad_token` / `cap_pad_token`;
 * - final layer: `LayerNorm(no affine, eps 1e-6)(x) · (1 + Linear(adaln → d)(SiLU(t_emb)))` (a SiLU here,
 *   unlike the blocks' adaLN; no shift, no gate), then Linear(d → 64) with bias, and unpatchify, the exact
 *   inverse of patchify. The `1 +` is folded into the bias at load; the product is the LayerNorm's weight.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../../harness/device.ts";
import type { TensorStore } from "../../../llm/safetensors.ts";
import { activationPlan } from "../../../ops/activation/mod.ts";
import { layernormPlan } from "../../../ops/layernorm/mod.ts";
import { permutePlan } from "../../../ops/permute/mod.ts";
import { rmsnormPlan } from "../../../ops/rmsnorm/mod.ts";
import {
  type DitConfig,
  ditSizes,
  FINAL_NORM_EPS,
  FREQUENCY_EMBEDDING_SIZE,
  PATCH_SIZE,
  SEQ_MULTI_OF,
  TIMESTEP_MLP_HIDDEN,
} from "../config.ts";
import { freeOnFailure } from "../../loading.ts";
import { type Linear, linearDispatch, linearTensors, uploadLinear } from "../../linear.ts";
import type { Steps } from "../program.ts";

/** The DiT's weights outside its blocks, on the GPU. */
export interface Embedders {
  /** t_embedder.mlp.0: 256 → 1024, vector. */
  t0: Linear;
  /** t_embedder.mlp.2: 1024 → adaln, vector. */
  t2: Linear;
  /** all_x_embedder.2-1: 64 → d, rows. */
  x: Linear;
  /** cap_embedder.0 (RMSNorm weight), `[capDim]`. */
  capNorm: GpuTensor;
  /** cap_embedder.1: capDim → d, rows. */
  cap: Linear;
  /** x_pad_token repeated 31 times, `[31, d]`. */
  xPad: GpuTensor;
  /** cap_pad_token repeated 31 times, `[31, d]`. */
  capPad: GpuTensor;
  /** all_final_layer.2-1.adaLN_modulation.1 with its bias plus one: adaln → d, vector. */
  finalScale: Linear;
  /** all_final_layer.2-1.linear: d → 64, rows. */
  final: Linear;
}

/**
 * Names and shapes of the DiT's tensors outside the blocks.
 *
 * @param config the DiT config
 * @returns names and shapes
 */
export function embedderTensors(config: DitConfig): { name: string; shape: number[] }[] {
  const { dim, capFeatDim } = config;
  const { adaln, patchFeatures } = ditSizes(config);
  return [
    { name: "x_pad_token", shape: [1, dim] },
    { name: "cap_pad_token", shape: [1, dim] },
    { name: "all_x_embedder.2-1.weight", shape: [dim, patchFeatures] },
    { name: "all_x_embedder.2-1.bias", shape: [dim] },
    { name: "all_final_layer.2-1.linear.weight", shape: [patchFeatures, dim] },
    { name: "all_final_layer.2-1.linear.bias", shape: [patchFeatures] },
    { name: "all_final_layer.2-1.adaLN_modulation.1.weight", shape: [dim, adaln] },
    { name: "all_final_layer.2-1.adaLN_modulation.1.bias", shape: [dim] },
    { name: "t_embedder.mlp.0.weight", shape: [TIMESTEP_MLP_HIDDEN, FREQUENCY_EMBEDDING_SIZE] },
    { name: "t_embedder.mlp.0.bias", shape: [TIMESTEP_MLP_HIDDEN] },
    { name: "t_embedder.mlp.2.weight", shape: [adaln, TIMESTEP_MLP_HIDDEN] },
    { name: "t_embedder.mlp.2.bias", shape: [adaln] },
    { name: "cap_embedder.0.weight", shape: [capFeatDim] },
    { name: "cap_embedder.1.weight", shape: [dim, capFeatDim] },
    { name: "cap_embedder.1.bias", shape: [dim] },
  ];
}

/**
 * Uploads the embedders and the final layer.
 *
 * @param gpu the device
 * @param store the DiT's tensors (official names)
 * @param config the DiT config
 * @returns the weights
 */
export async function loadEmbedders(gpu: ResidentDevice, store: TensorStore, config: DitConfig): Promise<Embedders> {
  const { dim, capFeatDim } = config;
  const { adaln, patchFeatures } = ditSizes(config);
  const read = (name: string) => store.readFloat32(name);
  // A load that fails halfway (a read, a quantization) frees what it uploaded.
  return await freeOnFailure(async (keep) => {
    const layer = async (name: string, N: number, K: number, plusOne = false) => {
      const bias = (await read(`${name}.bias`)).slice();
      if (plusOne) bias.forEach((b, i) => bias[i] = b + 1);
      return keep(await uploadLinear(gpu, await read(`${name}.weight`), N, K, { bias, label: name }));
    };
    const repeated = async (name: string) => {
      const row = await read(name), rows = new Float32Array((SEQ_MULTI_OF - 1) * dim);
      for (let r = 0; r < SEQ_MULTI_OF - 1; r++) rows.set(row, r * dim);
      return keep(gpu.upload(rows, name));
    };
    return {
      t0: await layer("t_embedder.mlp.0", TIMESTEP_MLP_HIDDEN, FREQUENCY_EMBEDDING_SIZE),
      t2: await layer("t_embedder.mlp.2", adaln, TIMESTEP_MLP_HIDDEN),
      x: await layer("all_x_embedder.2-1", dim, patchFeatures),
      capNorm: keep(gpu.upload(await read("cap_embedder.0.weight"), "cap_embedder.0.weight")),
      cap: await layer("cap_embedder.1", dim, capFeatDim),
      xPad: await repeated("x_pad_token"),
      capPad: await repeated("cap_pad_token"),
      finalScale: await layer("all_final_layer.2-1.adaLN_modulation.1", dim, adaln, true),
      final: await layer("all_final_layer.2-1.linear", patchFeatures, dim),
    };
  });
}

/**
 * Frees the embedders' tensors.
 *
 * @param e the weights
 */
export function destroyEmbedders(e: Embedders): void {
  for (const l of [e.t0, e.t2, e.x, e.cap, e.finalScale, e.final]) linearTensors(l).forEach((t) => t.buffer.destroy());
  for (const t of [e.capNorm, e.xPad, e.capPad]) t.buffer.destroy();
}

/** Small work tensors of the timestep path. */
export interface TimestepTensors {
  /** The sinusoid, `[256]` (written by the host each step). */
  sinusoid: GpuTensor;
  /** SiLU of the MLP's hidden layer, `[1024]`. */
  activated: GpuTensor;
  /** t_emb, `[adaln]`. */
  tEmb: GpuTensor;
  /** SiLU(t_emb), `[adaln]`. */
  tEmbSilu: GpuTensor;
  /** The final LayerNorm's weight, `1 + Linear(SiLU(t_emb))`, `[d]`. */
  finalScale: GpuTensor;
}

/**
 * Allocates the timestep path's tensors.
 *
 * @param gpu the device
 * @param config the DiT config
 * @returns the tensors
 */
export function allocTimestepTensors(gpu: ResidentDevice, config: DitConfig): TimestepTensors {
  const { adaln } = ditSizes(config);
  const a = (n: number, label: string) => gpu.alloc("f32", n, `timestep ${label}`);
  return {
    sinusoid: a(FREQUENCY_EMBEDDING_SIZE, "sinusoid"),
    activated: a(TIMESTEP_MLP_HIDDEN, "activated"),
    tEmb: a(adaln, "t_emb"),
    tEmbSilu: a(adaln, "silu(t_emb)"),
    finalScale: a(config.dim, "final scale"),
  };
}

/**
 * Appends t_emb from the sinusoid, and the final layer's scale from t_emb.
 *
 * @param steps where the dispatches go
 * @param gpu the device
 * @param e the weights
 * @param t the timestep tensors
 */
export function timestepSteps(steps: Steps, gpu: ResidentDevice, e: Embedders, t: TimestepTensors): void {
  steps.dispatch(linearDispatch(gpu, e.t0, 1, t.sinusoid, t.activated, { activation: "silu" }));
  steps.dispatch(linearDispatch(gpu, e.t2, 1, t.activated, t.tEmb));
  steps.run(activationPlan(gpu, { kind: "silu", n: e.t2.N }), [t.tEmb, t.tEmbSilu]);
  steps.dispatch(linearDispatch(gpu, e.finalScale, 1, t.tEmbSilu, t.finalScale));
}

/**
 * Appends patchify and the image embedder: `out` rows `[0, tokens)` get the embedded patches.
 *
 * @param steps where the dispatches go
 * @param gpu the device
 * @param config the DiT config
 * @param e the weights
 * @param latent `[16, H, W]`
 * @param H latent height (even)
 * @param W latent width (even)
 * @param patches `[tokens, 64]` work tensor
 * @param out the image stream
 */
export function imageEmbedSteps(
  steps: Steps,
  gpu: ResidentDevice,
  config: DitConfig,
  e: Embedders,
  latent: GpuTensor,
  H: number,
  W: number,
  patches: GpuTensor,
  out: GpuTensor,
): void {
  const C = config.inChannels, p = PATCH_SIZE;
  const shape = [C, H / p, p, W / p, p];
  steps.run(permutePlan(gpu, { shape, dims: [1, 3, 2, 4, 0] }), [latent, patches]);
  steps.dispatch(linearDispatch(gpu, e.x, (H / p) * (W / p), patches, out));
}

/**
 * Appends the caption embedder: `out` rows `[0, tokens)` get the embedded caption.
 *
 * @param steps where the dispatches go
 * @param gpu the device
 * @param config the DiT config
 * @param e the weights
 * @param cap caption features `[tokens, capDim]`
 * @param tokens the caption's length
 * @param normed `[tokens, capDim]` work tensor
 * @param out the caption stream
 */
export function captionEmbedSteps(
  steps: Steps,
  gpu: ResidentDevice,
  config: DitConfig,
  e: Embedders,
  cap: GpuTensor,
  tokens: number,
  normed: GpuTensor,
  out: GpuTensor,
): void {
  const plan = rmsnormPlan(gpu, { rows: tokens, cols: config.capFeatDim, groups: 1, eps: config.normEps });
  steps.run(plan, [cap, e.capNorm, normed]);
  steps.dispatch(linearDispatch(gpu, e.cap, tokens, normed, out));
}

/**
 * Appends the copy that fills rows `[tokens, padded)` of a stream with its pad token.
 *
 * @param steps where the copy goes
 * @param pad the pad token repeated (Embedders.xPad or capPad)
 * @param stream the stream
 * @param tokens its real length
 * @param padded its padded length
 * @param dim d
 */
export function padSteps(steps: Steps, pad: GpuTensor, stream: GpuTensor, tokens: number, padded: number, dim: number) {
  if (padded > tokens) steps.copy(pad, 0, stream, tokens * dim, (padded - tokens) * dim);
}

/**
 * Appends the final layer over `tokens` rows of the unified stream and unpatchify of its first
 * `H/2 · W/2` rows into `out` `[16, H, W]`.
 *
 * @param steps where the dispatches go
 * @param gpu the device
 * @param config the DiT config
 * @param e the weights
 * @param t the timestep tensors (its finalScale)
 * @param x the unified stream
 * @param tokens its length
 * @param H latent height
 * @param W latent width
 * @param normed `[tokens, d]` work tensor
 * @param tokensOut `[tokens, 64]`: the final layer's output
 * @param out `[16, H, W]`
 * @param noBias any tensor (the LayerNorm's unused bias binding)
 */
export function finalSteps(
  steps: Steps,
  gpu: ResidentDevice,
  config: DitConfig,
  e: Embedders,
  t: TimestepTensors,
  x: GpuTensor,
  tokens: number,
  H: number,
  W: number,
  normed: GpuTensor,
  tokensOut: GpuTensor,
  out: GpuTensor,
  noBias: GpuTensor,
): void {
  const norm = layernormPlan(gpu, { rows: tokens, cols: config.dim, hasWeight: true, eps: FINAL_NORM_EPS });
  steps.run(norm, [x, t.finalScale, noBias, normed]);
  steps.dispatch(linearDispatch(gpu, e.final, tokens, normed, tokensOut));
  const C = config.inChannels, p = PATCH_SIZE;
  steps.run(permutePlan(gpu, { shape: [H / p, W / p, p, p, C], dims: [4, 0, 2, 1, 3] }), [tokensOut, out]);
}
