/**
 * Anima's configuration, read from its checkpoints: every size the forward needs comes from a
 * tensor's shape (the block count from the names, so the 28-block Anima and the 52-block
 * Anima-3.8B load through the same code), and the constants that no shape holds (the RoPE
 * extrapolation ratios, the norms' eps, the Wan latent statistics) are Anima's and are written here
 * once.
 *
 * The three components:
 * - the DiT (Cosmos-Predict2's MiniTrainDIT, checkpoint names `net.*`): width, heads (from the
 *   q_norm's length, the head size), context width, adaLN-LoRA rank, MLP width, blocks; patch 2,
 *   16 latent channels plus the padding-mask channel in (68 = 17 · 2 · 2 patch features), 16 out;
 * - the LLM adapter (`net.llm_adapter.*`): source (Qwen3) width, target (T5-embedding) width,
 *   model width (an `in_proj` exists only where model and target differ), heads, layers, MLP width,
 *   vocabulary (32,128 in the real model);
 * - the Wan 2.1 VAE decoder (`conv2.*`, `decoder.*`): base width and latent channels; the channel
 *   multipliers [1, 2, 4, 4] and two residual blocks per stage are Wan 2.1's and are checked
 *   tensor by tensor by the layout check (weights.ts), not assumed.
 *
 * @module
 */

import type { TensorStore } from "../../llm/safetensors.ts";

/** The DiT's sizes. */
export interface DitConfig {
  /** Transformer blocks: 28 (Anima), 52 (Anima-3.8B). */
  blocks: number;
  /** Model width D (2048). */
  dim: number;
  /** Attention heads (16). */
  heads: number;
  /** Channels per head, dim / heads (128). */
  headDim: number;
  /** Width of the cross-attention context rows (1024). */
  contextDim: number;
  /** adaLN-LoRA rank (256). */
  adalnLoraDim: number;
  /** MLP hidden width (4 · dim). */
  mlpDim: number;
  /** Latent channels in and out (16). */
  channels: number;
  /** Spatial patch size (2). */
  patch: number;
  /** RoPE channels per axis, [t, h, w] ([44, 42, 42]): h = w = headDim // 6 · 2, t the rest. */
  ropeDims: [number, number, number];
  /** RoPE base per axis, [t, h, w]: 10000 · ratio^(dim / (dim − 2)) with ratios 1, 4, 4. */
  ropeTheta: [number, number, number];
  /** Rows of the cross-attention context: the adapter's output zero-padded to 512. */
  contextRows: number;
}

/** The LLM adapter's sizes. */
export interface AdapterConfig {
  /** Transformer blocks (6). */
  layers: number;
  /** Width of the Qwen3 states it cross-attends to (1024). */
  sourceDim: number;
  /** Width of the T5 embedding table and of the output (1024). */
  targetDim: number;
  /** Width inside the blocks (1024); an `in_proj` maps target to model where they differ. */
  modelDim: number;
  /** Attention heads (16). */
  heads: number;
  /** Channels per head (64). */
  headDim: number;
  /** MLP hidden width (4 · modelDim). */
  mlpDim: number;
  /** Rows of the T5 embedding table (32,128). */
  vocab: number;
  /** Whether the checkpoint has `in_proj` (model width ≠ target width). */
  inProj: boolean;
}

/** The Wan 2.1 VAE decoder's sizes. */
export interface VaeConfig {
  /** Base width (96): the stages run at dim · [4, 4, 4, 2, 1]. */
  dim: number;
  /** Latent channels (16). */
  zDim: number;
  /** Channel multipliers, Wan 2.1's [1, 2, 4, 4]. */
  dimMult: readonly number[];
  /** Residual blocks per encoder stage (2; the decoder runs one more per stage). */
  numResBlocks: number;
  /** Per-channel latent mean (16 values): z is un-normalised as z · std + mean. */
  latentsMean: readonly number[];
  /** Per-channel latent standard deviation (16 values). */
  latentsStd: readonly number[];
}

/** Epsilon of every RMSNorm and LayerNorm in the DiT and the adapter. */
export const NORM_EPS = 1e-6;
/** The DiT's context rows (ComfyUI, diffusers and sd-scripts all pad the adapter output to 512). */
export const CONTEXT_ROWS = 512;
/** RoPE extrapolation ratios of Anima, [t, h, w] (Cosmos-Predict2 2B's config). */
export const ROPE_RATIOS: readonly [number, number, number] = [1, 4, 4];
/** The adapter's RoPE base. */
export const ADAPTER_ROPE_THETA = 10000;
/** Pixels per latent cell: the Wan 2.1 VAE decoder's three 2x upsamplings (multipliers [1, 2, 4, 4]). */
export const VAE_SCALE = 8;
/**
 * What an image's width and height must be multiples of: a DiT patch (2 x 2 latent cells) of
 * {@link VAE_SCALE}-pixel cells, 16. Every checkpoint this port reads has it (the patch and the VAE's
 * multipliers are Anima's, checked by the layout checks), so it is known before any file is opened.
 */
export const PIXEL_UNIT = 2 * VAE_SCALE;

/** Wan 2.1's latent mean per channel (`WanVAE.__init__`; diffusers' `AutoencoderKLQwenImage` default). */
export const WAN_LATENTS_MEAN: readonly number[] = [
  -0.7571,
  -0.7089,
  -0.9113,
  0.1075,
  -0.1745,
  0.9653,
  -0.1517,
  1.5508,
  0.4134,
  -0.0715,
  0.5517,
  -0.3632,
  -0.1922,
  -0.9497,
  0.2503,
  -0.2921,
];
/** Wan 2.1's latent standard deviation per channel. */
export const WAN_LATENTS_STD: readonly number[] = [
  2.8184,
  1.4541,
  2.3275,
  2.6558,
  1.2196,
  1.7708,
  2.6052,
  2.0743,
  3.2687,
  2.1526,
  2.8652,
  1.5579,
  1.6382,
  1.1253,
  2.8251,
  1.916,
];

function shapeOf(store: TensorStore, name: string, what: string): number[] {
  const t = store.tensors.find((t) => t.name === name);
  if (!t) throw new Error(`${what}: the checkpoint has no tensor "${name}"`);
  return t.shape;
}

/** The distinct block indices of names `<prefix><i>.` in a store, checked to be 0 .. n−1. */
function countBlocks(store: TensorStore, prefix: string, what: string): number {
  const seen = new Set<number>();
  for (const { name } of store.tensors) {
    if (!name.startsWith(prefix)) continue;
    const i = Number(name.slice(prefix.length).split(".")[0]);
    if (Number.isInteger(i) && i >= 0) seen.add(i);
  }
  const n = seen.size;
  for (let i = 0; i < n; i++) {
    if (!seen.has(i)) throw new Error(`${what}: blocks are not numbered 0..${n - 1} (block ${i} is missing)`);
  }
  if (n === 0) throw new Error(`${what}: the checkpoint has no tensors named "${prefix}<i>.*"`);
  return n;
}

/**
 * The RoPE split of a Cosmos-Predict2 head: h = w = headDim // 6 · 2 channels, t the rest, and
 * each axis's base 10000 · ratio^(d / (d − 2)).
 *
 * @param headDim channels per head (even)
 * @returns the channels and the base per axis, [t, h, w]
 *
 * @example
 * ```ts
 * import { ditRopeSplit } from "@xpu/ops/models/anima";
 * ditRopeSplit(128); // dims [44, 42, 42], theta [10000, 42870.94..., 42870.94...]
 * ```
 */
export function ditRopeSplit(headDim: number): { dims: [number, number, number]; theta: [number, number, number] } {
  const h = Math.floor(headDim / 6) * 2;
  const t = headDim - 2 * h;
  const dims: [number, number, number] = [t, h, h];
  const theta = dims.map((d, a) => 10000 * ROPE_RATIOS[a] ** (d / (d - 2))) as [number, number, number];
  return { dims, theta };
}

/**
 * The DiT's configuration from its checkpoint (names without the `net.` prefix).
 *
 * @param store the DiT's tensors (a `scopedStore(file, "net.")` view of a ComfyUI checkpoint)
 * @returns the sizes
 * @throws Error naming the tensor that is missing or the size that does not fit
 *
 * @example
 * ```ts
 * import { ditConfigFromStore, ditStores } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const config = ditConfigFromStore(ditStores(await open("weights_dit")).dit);
 * console.log(config.blocks, config.dim, config.heads); // 2 48 2 (the tiny golden set)
 * ```
 */
export function ditConfigFromStore(store: TensorStore): DitConfig {
  const what = "anima DiT";
  const [dim, patchIn] = shapeOf(store, "x_embedder.proj.1.weight", what);
  const [headDim] = shapeOf(store, "blocks.0.self_attn.q_norm.weight", what);
  const [, contextDim] = shapeOf(store, "blocks.0.cross_attn.k_proj.weight", what);
  const [adalnLoraDim] = shapeOf(store, "blocks.0.adaln_modulation_self_attn.1.weight", what);
  const [mlpDim] = shapeOf(store, "blocks.0.mlp.layer1.weight", what);
  const [outFeatures] = shapeOf(store, "final_layer.linear.weight", what);
  const patch = 2;
  const channels = outFeatures / (patch * patch);
  if (!Number.isInteger(channels) || patchIn !== (channels + 1) * patch * patch) {
    throw new Error(
      `${what}: x_embedder takes ${patchIn} features and final_layer gives ${outFeatures}; expected ` +
        `(C + 1)·4 and C·4 (C latent channels, the padding-mask channel, 2 x 2 patches)`,
    );
  }
  if (dim % headDim !== 0 || headDim % 2 !== 0) {
    throw new Error(`${what}: width ${dim} is not a whole number of ${headDim}-channel heads`);
  }
  const { dims, theta } = ditRopeSplit(headDim);
  return {
    blocks: countBlocks(store, "blocks.", what),
    dim,
    heads: dim / headDim,
    headDim,
    contextDim,
    adalnLoraDim,
    mlpDim,
    channels,
    patch,
    ropeDims: dims,
    ropeTheta: theta,
    contextRows: CONTEXT_ROWS,
  };
}

/**
 * The LLM adapter's configuration from its checkpoint (names without `net.llm_adapter.`).
 *
 * @param store the adapter's tensors
 * @returns the sizes
 * @throws Error naming the tensor that is missing
 *
 * @example
 * ```ts
 * import { adapterConfigFromStore, ditStores } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const config = adapterConfigFromStore(ditStores(await open("weights_dit")).adapter);
 * console.log(config.layers, config.sourceDim, config.targetDim); // 2 40 32
 * ```
 */
export function adapterConfigFromStore(store: TensorStore): AdapterConfig {
  const what = "anima LLM adapter";
  const [vocab, targetDim] = shapeOf(store, "embed.weight", what);
  const [modelDim] = shapeOf(store, "blocks.0.self_attn.q_proj.weight", what);
  const [headDim] = shapeOf(store, "blocks.0.self_attn.q_norm.weight", what);
  const [, sourceDim] = shapeOf(store, "blocks.0.cross_attn.k_proj.weight", what);
  const [mlpDim] = shapeOf(store, "blocks.0.mlp.0.weight", what);
  if (modelDim % headDim !== 0) {
    throw new Error(`${what}: width ${modelDim} is not a whole number of ${headDim}-channel heads`);
  }
  return {
    layers: countBlocks(store, "blocks.", what),
    sourceDim,
    targetDim,
    modelDim,
    heads: modelDim / headDim,
    headDim,
    mlpDim,
    vocab,
    inProj: store.tensors.some((t) => t.name === "in_proj.weight"),
  };
}

/**
 * The VAE decoder's configuration from its checkpoint (`conv2.*`, `decoder.*`).
 *
 * @param store the VAE's tensors (an encoder's, if present, are not read)
 * @returns the sizes, with Wan 2.1's multipliers and latent statistics
 * @throws Error naming the tensor that is missing
 *
 * @example
 * ```ts
 * import { vaeConfigFromStore } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * console.log(vaeConfigFromStore(await open("weights_vae")).dim); // 4 (the real decoder: 96)
 * ```
 */
export function vaeConfigFromStore(store: TensorStore): VaeConfig {
  const what = "anima VAE";
  const [zDim] = shapeOf(store, "conv2.weight", what);
  const [, dim] = shapeOf(store, "decoder.head.2.weight", what);
  if (zDim !== WAN_LATENTS_MEAN.length) {
    throw new Error(
      `${what}: conv2 has ${zDim} channels; the Wan 2.1 latent statistics are for ${WAN_LATENTS_MEAN.length}`,
    );
  }
  return {
    dim,
    zDim,
    dimMult: [1, 2, 4, 4],
    numResBlocks: 2,
    latentsMean: WAN_LATENTS_MEAN,
    latentsStd: WAN_LATENTS_STD,
  };
}
