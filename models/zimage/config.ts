/**
 * Z-Image's configuration: the DiT's and the VAE decoder's sizes, parsed from the checkpoint's
 * `config.json` files (diffusers / upstream key names), with the constants upstream hard-codes.
 *
 * @module
 */

import { parseQwen3Config, type Qwen3Config } from "../qwen3/config.ts";

/** The DiT's sizes (upstream's `ZImageTransformer2DModel` arguments). */
export interface DitConfig {
  /** Latent channels, 16. */
  inChannels: number;
  /** Hidden size d (Turbo: 3840). */
  dim: number;
  /** Main layers (30). */
  nLayers: number;
  /** Layers of each refiner, noise and context (2). */
  nRefinerLayers: number;
  /** Attention heads (30); the head size is dim / nHeads. */
  nHeads: number;
  /** RMSNorm eps of every norm in the blocks (1e-5). */
  normEps: number;
  /** Caption feature size: the text encoder's hidden size (2560). */
  capFeatDim: number;
  /** RoPE base (256). */
  ropeTheta: number;
  /** Multiplier of t before the sinusoid (1000). */
  tScale: number;
  /** RoPE channels per axis (frame, row, column), summing to the head size ([32, 48, 48]). */
  axesDims: number[];
}

/** The VAE decoder's sizes (diffusers' `AutoencoderKL` config, FLUX.1's AE). */
export interface VaeConfig {
  /** Latent channels, 16. */
  latentChannels: number;
  /** Image channels, 3. */
  outChannels: number;
  /** Channels of the encoder's blocks ([128, 256, 512, 512]); the decoder walks them reversed. */
  blockOutChannels: number[];
  /** Resnets per encoder block; each decoder up block has one more (2, so 3). */
  layersPerBlock: number;
  /** GroupNorm groups (32). */
  normNumGroups: number;
  /** Latent scaling: the decoder's input is `latent / scalingFactor + shiftFactor`. */
  scalingFactor: number;
  /** Latent shift (see scalingFactor). */
  shiftFactor: number;
}

/** Sizes both parts use, and what the pipeline derives. */
export interface ZImageConfig {
  /** The DiT. */
  dit: DitConfig;
  /** The VAE decoder. */
  vae: VaeConfig;
}

/**
 * Z-Image Turbo's text encoder, Qwen3-4B (its `text_encoder/config.json`; ComfyUI's
 * `qwen_3_4b.safetensors` comes without one). Z-Image reads `hidden_states[-2]`.
 */
export const QWEN3_4B: Qwen3Config = parseQwen3Config({
  model_type: "qwen3",
  hidden_size: 2560,
  intermediate_size: 9728,
  num_hidden_layers: 36,
  num_attention_heads: 32,
  num_key_value_heads: 8,
  head_dim: 128,
  vocab_size: 151936,
  rope_theta: 1000000,
  rms_norm_eps: 1e-6,
  tie_word_embeddings: true,
  max_position_embeddings: 40960,
  bos_token_id: 151643,
  eos_token_id: 151645,
});

/** Which of transformers' `hidden_states` Z-Image takes as caption features: the second-to-last. */
export const CAPTION_HIDDEN_STATE: number = -2;

/** Caption tokens at most: the chat-templated prompt is truncated to this many (upstream's max_sequence_length). */
export const MAX_CAPTION_TOKENS: number = 512;

/** Width of the timestep embedding that modulates the blocks: min(dim, 256) (upstream's ADALN_EMBED_DIM). */
export const ADALN_EMBED_DIM = 256;
/** Size of the timestep sinusoid (upstream's FREQUENCY_EMBEDDING_SIZE). */
export const FREQUENCY_EMBEDDING_SIZE = 256;
/** Hidden size of the timestep MLP, hard-coded upstream. */
export const TIMESTEP_MLP_HIDDEN = 1024;
/** Longest period of the timestep sinusoid (upstream's MAX_PERIOD). */
export const MAX_PERIOD = 10000;
/** Token streams are padded to a multiple of this (upstream's SEQ_MULTI_OF). */
export const SEQ_MULTI_OF = 32;
/** Patch size in the latent (height and width); frames are not patched. */
export const PATCH_SIZE = 2;
/** The final layer's LayerNorm eps. */
export const FINAL_NORM_EPS = 1e-6;
/** The VAE's GroupNorm eps. */
export const VAE_NORM_EPS = 1e-6;

/** Z-Image Turbo (Tongyi-MAI/Z-Image-Turbo: upstream's defaults, and FLUX.1's AE). */
export const Z_IMAGE_TURBO: ZImageConfig = {
  dit: {
    inChannels: 16,
    dim: 3840,
    nLayers: 30,
    nRefinerLayers: 2,
    nHeads: 30,
    normEps: 1e-5,
    capFeatDim: 2560,
    ropeTheta: 256,
    tScale: 1000,
    axesDims: [32, 48, 48],
  },
  vae: {
    latentChannels: 16,
    outChannels: 3,
    blockOutChannels: [128, 256, 512, 512],
    layersPerBlock: 2,
    normNumGroups: 32,
    scalingFactor: 0.3611,
    shiftFactor: 0.1159,
  },
};

/** Sizes derived from a {@link DitConfig}. */
export interface DitSizes {
  /** Channels per head. */
  headDim: number;
  /** FFN hidden size, int(dim / 3 · 8). */
  ffnHidden: number;
  /** Width of t_emb, min(dim, 256). */
  adaln: number;
  /** Features of a patch token: inChannels · 2 · 2. */
  patchFeatures: number;
}

/**
 * The sizes a DiT config implies.
 *
 * @param dit the config
 * @returns head size, FFN width, adaLN width and patch features
 *
 * @example
 * ```ts
 * import { ditSizes, Z_IMAGE_TURBO } from "@xpu/ops/models/zimage";
 * ditSizes(Z_IMAGE_TURBO.dit); // { headDim: 128, ffnHidden: 10240, adaln: 256, patchFeatures: 64 }
 * ```
 */
export function ditSizes(dit: DitConfig): DitSizes {
  return {
    headDim: dit.dim / dit.nHeads,
    ffnHidden: Math.trunc((dit.dim / 3) * 8),
    adaln: Math.min(dit.dim, ADALN_EMBED_DIM),
    patchFeatures: dit.inChannels * PATCH_SIZE * PATCH_SIZE,
  };
}

function field<T>(
  json: Record<string, unknown>,
  key: string,
  what: string,
  check: (v: unknown) => v is T,
  expected: string,
): T {
  const v = json[key];
  if (!check(v)) throw new Error(`${what}: "${key}" must be ${expected}, got ${JSON.stringify(v)}`);
  return v;
}
const isPositiveInt = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1;
const isPositive = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v > 0;
const isFinite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isIntList = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every(isPositiveInt);

/**
 * Parses the DiT's `config.json` (diffusers' `transformer/config.json`, upstream's argument names),
 * refusing what this port does not implement.
 *
 * @param json the parsed file
 * @returns the config
 * @throws Error naming the key: a missing or ill-typed size, a patch size other than 2 (frames 1),
 *   grouped KV heads, no QK-norm, a head size that is not dim / heads or that axes_dims does not sum to
 *
 * @example
 * ```ts
 * import { parseDitConfig } from "@xpu/ops/models/zimage";
 * const dit = parseDitConfig({
 *   in_channels: 16, dim: 64, n_layers: 2, n_refiner_layers: 1, n_heads: 2, n_kv_heads: 2, norm_eps: 1e-5,
 *   cap_feat_dim: 32, rope_theta: 256, t_scale: 1000, axes_dims: [8, 12, 12], qk_norm: true,
 * });
 * dit.dim; // 64
 * ```
 */
export function parseDitConfig(json: Record<string, unknown>): DitConfig {
  const what = "Z-Image DiT config";
  const int = (key: string) => field(json, key, what, isPositiveInt, "an integer >= 1");
  const patch = json.all_patch_size ?? [2], fpatch = json.all_f_patch_size ?? [1];
  if (JSON.stringify(patch) !== "[2]" || JSON.stringify(fpatch) !== "[1]") {
    throw new Error(
      `${what}: only all_patch_size [2] and all_f_patch_size [1] are implemented, got ${JSON.stringify(patch)} and ${
        JSON.stringify(fpatch)
      }`,
    );
  }
  if (json.qk_norm === false) throw new Error(`${what}: "qk_norm" false is not implemented (Z-Image uses QK-norm)`);
  const dit: DitConfig = {
    inChannels: int("in_channels"),
    dim: int("dim"),
    nLayers: int("n_layers"),
    nRefinerLayers: int("n_refiner_layers"),
    nHeads: int("n_heads"),
    normEps: field(json, "norm_eps", what, isPositive, "a number > 0"),
    capFeatDim: int("cap_feat_dim"),
    ropeTheta: field(json, "rope_theta", what, isPositive, "a number > 0"),
    tScale: field(json, "t_scale", what, isFinite, "a finite number"),
    axesDims: field(json, "axes_dims", what, isIntList, "a list of integers >= 1"),
  };
  const kv = json.n_kv_heads ?? dit.nHeads;
  if (kv !== dit.nHeads) throw new Error(`${what}: "n_kv_heads" must equal n_heads (${dit.nHeads}), got ${kv}`);
  if (dit.dim % dit.nHeads !== 0) {
    throw new Error(`${what}: "dim" (${dit.dim}) must be a multiple of "n_heads" (${dit.nHeads})`);
  }
  const sum = dit.axesDims.reduce((a, b) => a + b, 0);
  if (sum !== dit.dim / dit.nHeads || dit.axesDims.some((d) => d % 2 !== 0)) {
    throw new Error(
      `${what}: "axes_dims" must be even and sum to the head size ${dit.dim / dit.nHeads}, got ${
        JSON.stringify(dit.axesDims)
      }`,
    );
  }
  return dit;
}

/**
 * Parses the VAE's `config.json` (diffusers' `vae/config.json`, `AutoencoderKL`), refusing what
 * this port does not implement.
 *
 * @param json the parsed file
 * @returns the decoder's config
 * @throws Error naming the key: a missing or ill-typed size, a post-quant conv, no mid-block attention,
 *   channels not divisible by the groups
 *
 * @example
 * ```ts
 * import { parseVaeConfig } from "@xpu/ops/models/zimage";
 * const vae = parseVaeConfig({
 *   latent_channels: 16, out_channels: 3, block_out_channels: [32, 64], layers_per_block: 2,
 *   norm_num_groups: 8, scaling_factor: 0.3611, shift_factor: 0.1159,
 * });
 * vae.blockOutChannels; // [32, 64]
 * ```
 */
export function parseVaeConfig(json: Record<string, unknown>): VaeConfig {
  const what = "Z-Image VAE config";
  const int = (key: string) => field(json, key, what, isPositiveInt, "an integer >= 1");
  if (json.use_post_quant_conv === true) throw new Error(`${what}: "use_post_quant_conv" true is not implemented`);
  if (json.mid_block_add_attention === false) {
    throw new Error(`${what}: "mid_block_add_attention" false is not implemented`);
  }
  const vae: VaeConfig = {
    latentChannels: int("latent_channels"),
    outChannels: int("out_channels"),
    blockOutChannels: field(json, "block_out_channels", what, isIntList, "a list of integers >= 1"),
    layersPerBlock: int("layers_per_block"),
    normNumGroups: int("norm_num_groups"),
    scalingFactor: field(json, "scaling_factor", what, isPositive, "a number > 0"),
    shiftFactor: field(json, "shift_factor", what, isFinite, "a finite number"),
  };
  const bad = vae.blockOutChannels.find((c) => c % vae.normNumGroups !== 0);
  if (bad !== undefined) {
    throw new Error(
      `${what}: block_out_channels entry ${bad} is not a multiple of norm_num_groups ${vae.normNumGroups}`,
    );
  }
  return vae;
}

/**
 * How many pixels one latent cell spans: 2^(up blocks − 1) (Turbo: 8).
 *
 * @param vae the VAE config
 * @returns the factor
 *
 * @example
 * ```ts
 * import { vaeScaleFactor, Z_IMAGE_TURBO } from "@xpu/ops/models/zimage";
 * vaeScaleFactor(Z_IMAGE_TURBO.vae); // 8: a 128 x 128 latent decodes to 1024 x 1024
 * ```
 */
export function vaeScaleFactor(vae: VaeConfig): number {
  return 2 ** (vae.blockOutChannels.length - 1);
}

/**
 * What an image's width and height must be multiples of: a DiT patch (2 x 2 latent cells) of VAE
 * cells ({@link vaeScaleFactor} pixels each); Turbo: 16. Known from the configs alone, before any
 * weight is read.
 *
 * @param config the checkpoint's config
 * @returns pixels
 *
 * @example
 * ```ts
 * import { pixelUnit, Z_IMAGE_TURBO } from "@xpu/ops/models/zimage";
 * pixelUnit(Z_IMAGE_TURBO); // 16: 1024 x 1024 and 1024 x 768 are sizes, 1000 x 1000 is not
 * ```
 */
export function pixelUnit(config: ZImageConfig): number {
  return PATCH_SIZE * vaeScaleFactor(config.vae);
}
