/**
 * Z-Image's checkpoints: which tensors each component must hold, and where they are under the two
 * layouts published for Z-Image Turbo.
 *
 * - **diffusers / official** (Tongyi-MAI/Z-Image-Turbo): `transformer/` (sharded, F32), `vae/`
 *   (`AutoencoderKL` names, BF16, with the encoder, which decoding ignores), `text_encoder/`
 *   (transformers' `Qwen3Model` names, BF16), `tokenizer/`. The DiT's names are
 *   upstream's module names, the ones every other part of this port uses ("official names").
 * - **ComfyUI split files**: `z_image_turbo_bf16.safetensors` (the DiT with a fused `attention.qkv`
 *   `[3d, d]`, `attention.out`, `attention.q_norm`/`k_norm`, `x_embedder`, `final_layer`; an optional
 *   `model.diffusion_model.` prefix), `ae.safetensors` (FLUX.1's AE in Black Forest Labs' own names:
 *   `mid.block_1`, `mid.attn_1.{q,k,v,proj_out}` as 1x1 convolutions, `up.{3-i}.block.{j}`,
 *   `nin_shortcut`, `norm_out`), `qwen_3_4b.safetensors`.
 *
 * {@link DIT_COMFYUI_RULES} and {@link VAE_BFL_RULES} are the one mapping table: each rule rewrites an
 * official name into the other layout's (and which third of a fused tensor it is). {@link openDit},
 * {@link openVaeDecoder} detect the layout, check that the checkpoint holds exactly the expected tensors
 * with their shapes (naming each missing, extra or mis-shaped one) before any data is read, and return a
 * store under official names; the text encoder's checkpoint is models/qwen3's to check
 * (`openQwen3Checkpoint`: `Qwen3Model` names, or a causal LM's `model.`-prefixed ones).
 *
 * @module
 */

import {
  SafetensorsError,
  type TensorInfo,
  tensorRowBytes,
  type TensorStore,
  toFloat32,
} from "../../llm/safetensors.ts";
import { checkTensorLayout, type ExpectedTensor, scopedStore } from "../../llm/weights/checkpoint.ts";
import type { DitConfig, VaeConfig } from "./config.ts";
import { blockTensors } from "./transformer/block.ts";
import { embedderTensors } from "./transformer/embedders.ts";
import { decoderTensors } from "./vae/decoder.ts";

/** A rewrite of an official name: `[pattern, replacement, part]`, part = which third of a fused tensor. */
export type NameRule = readonly [RegExp, string, number?];

/** Official DiT name → ComfyUI name (and the third of `attention.qkv` it is). */
export const DIT_COMFYUI_RULES: readonly NameRule[] = [
  [/^all_x_embedder\.2-1\./, "x_embedder."],
  [/^all_final_layer\.2-1\./, "final_layer."],
  [/\.attention\.to_q\.weight$/, ".attention.qkv.weight", 0],
  [/\.attention\.to_k\.weight$/, ".attention.qkv.weight", 1],
  [/\.attention\.to_v\.weight$/, ".attention.qkv.weight", 2],
  [/\.attention\.to_out\.0\./, ".attention.out."],
  [/\.attention\.norm_q\./, ".attention.q_norm."],
  [/\.attention\.norm_k\./, ".attention.k_norm."],
];

/**
 * Official VAE decoder name (without `decoder.`) → Black Forest Labs' name (without `decoder.`), for
 * `blocks` up blocks. BFL numbers the up blocks from the lowest resolution's end: diffusers' up block i
 * is BFL's `up.{blocks-1-i}`. The attention's q, k, v and proj_out are 1x1 convolutions there
 * (`[C, C, 1, 1]`, the same bytes as diffusers' `[C, C]` Linear).
 *
 * @param blocks the decoder's up blocks (4 for FLUX.1's AE)
 * @returns the rules
 *
 * @example
 * ```ts
 * import { vaeBflRules } from "@xpu/ops/models/zimage";
 * vaeBflRules(4)[0]; // [/^mid_block\.resnets\.0\./, "mid.block_1."]
 * ```
 */
export function vaeBflRules(blocks: number): NameRule[] {
  const rules: NameRule[] = [
    [/^mid_block\.resnets\.0\./, "mid.block_1."],
    [/^mid_block\.resnets\.1\./, "mid.block_2."],
    [/^mid_block\.attentions\.0\.group_norm\./, "mid.attn_1.norm."],
    [/^mid_block\.attentions\.0\.to_q\./, "mid.attn_1.q."],
    [/^mid_block\.attentions\.0\.to_k\./, "mid.attn_1.k."],
    [/^mid_block\.attentions\.0\.to_v\./, "mid.attn_1.v."],
    [/^mid_block\.attentions\.0\.to_out\.0\./, "mid.attn_1.proj_out."],
    [/^conv_norm_out\./, "norm_out."],
    [/\.conv_shortcut\./, ".nin_shortcut."],
  ];
  for (let i = 0; i < blocks; i++) {
    rules.push([new RegExp(`^up_blocks\\.${i}\\.resnets\\.`), `up.${blocks - 1 - i}.block.`]);
    rules.push([new RegExp(`^up_blocks\\.${i}\\.upsamplers\\.0\\.`), `up.${blocks - 1 - i}.upsample.`]);
  }
  return rules;
}

/** {@link vaeBflRules} for FLUX.1's four up blocks. */
export const VAE_BFL_RULES: readonly NameRule[] = vaeBflRules(4);

function rewrite(name: string, rules: readonly NameRule[]): { name: string; part?: number } {
  let part: number | undefined;
  for (const [pattern, replacement, p] of rules) {
    if (pattern.test(name)) {
      name = name.replace(pattern, replacement);
      part ??= p;
    }
  }
  return { name, part };
}

/**
 * Every tensor the DiT reads, under its official name.
 *
 * @param config the DiT config
 * @returns names and shapes
 *
 * @example
 * ```ts
 * import { ditTensors, Z_IMAGE_TURBO } from "@xpu/ops/models/zimage";
 * const tensors = ditTensors(Z_IMAGE_TURBO.dit);
 * tensors.length; // 521
 * tensors[0]; // { name: "x_pad_token", shape: [1, 3840] }
 * ```
 */
export function ditTensors(config: DitConfig): ExpectedTensor[] {
  const out: ExpectedTensor[] = [...embedderTensors(config)];
  const add = (prefix: string, modulated: boolean) => {
    for (const t of blockTensors(config, modulated)) out.push({ name: prefix + t.name, shape: t.shape });
  };
  for (let i = 0; i < config.nRefinerLayers; i++) add(`noise_refiner.${i}.`, true);
  for (let i = 0; i < config.nRefinerLayers; i++) add(`context_refiner.${i}.`, false);
  for (let i = 0; i < config.nLayers; i++) add(`layers.${i}.`, true);
  return out;
}

/**
 * A store that shows `source`'s tensors under other names: each official name maps to a stored
 * tensor, or to one third (along the first axis) of a fused one, with the official shape.
 */
class MappedStore implements TensorStore {
  readonly tensors: readonly TensorInfo[];
  readonly metadata: Record<string, string>;
  readonly #source: TensorStore;
  readonly #map: Map<string, { name: string; part?: number; info: TensorInfo }>;
  #fused?: { name: string; bytes: Promise<Uint8Array> };

  constructor(source: TensorStore, expected: readonly ExpectedTensor[], rules: readonly NameRule[], prefix: string) {
    this.#source = source;
    this.metadata = source.metadata;
    this.#map = new Map();
    const tensors: TensorInfo[] = [];
    for (const { name, shape } of expected) {
      const mapped = rewrite(name, rules);
      const stored = source.info(prefix + mapped.name);
      const info = { ...stored, name, shape: [...shape] };
      this.#map.set(name, { name: prefix + mapped.name, part: mapped.part, info });
      tensors.push(info);
    }
    this.tensors = tensors;
  }

  info(name: string): TensorInfo {
    const entry = this.#map.get(name);
    if (!entry) throw new SafetensorsError("TensorNotFound", "mapped checkpoint", `no tensor named ${name}`);
    return entry.info;
  }

  async read(name: string): Promise<Uint8Array> {
    const entry = this.#map.get(name);
    if (!entry) throw new SafetensorsError("TensorNotFound", "mapped checkpoint", `no tensor named ${name}`);
    if (entry.part === undefined) return await this.#source.read(entry.name);
    // The three parts of a fused tensor are read one after the other: fetch it once for the three.
    if (this.#fused?.name !== entry.name) this.#fused = { name: entry.name, bytes: this.#source.read(entry.name) };
    const bytes = await this.#fused.bytes;
    const third = bytes.length / 3;
    return bytes.slice(entry.part * third, (entry.part + 1) * third);
  }

  async readRows(name: string, row0: number, rows: number): Promise<Uint8Array> {
    const entry = this.#map.get(name);
    if (!entry) throw new SafetensorsError("TensorNotFound", "mapped checkpoint", `no tensor named ${name}`);
    tensorRowBytes(entry.info, row0, rows); // within this tensor's rows, not only the fused one's
    // Part p of a fused tensor is its rows [p N, (p + 1) N).
    return await this.#source.readRows(entry.name, (entry.part ?? 0) * entry.info.shape[0] + row0, rows);
  }

  async readFloat32(name: string): Promise<Float32Array> {
    return toFloat32(this.info(name).dtype, await this.read(name));
  }
}

/** The stored names and shapes a layout needs for `expected`, for {@link checkTensorLayout}. */
function storedLayout(
  expected: readonly ExpectedTensor[],
  rules: readonly NameRule[],
  prefix: string,
): ExpectedTensor[] {
  const byName = new Map<string, ExpectedTensor>();
  for (const { name, shape } of expected) {
    const mapped = rewrite(name, rules);
    const stored = prefix + mapped.name;
    if (mapped.part === undefined) byName.set(stored, { name: stored, shape });
    else byName.set(stored, { name: stored, shape: [3 * shape[0], ...shape.slice(1)] });
  }
  return [...byName.values()];
}

/** A layout's rules and the shape a stored tensor has under them (for the VAE's 1x1 convolutions). */
function reshapedForBfl(layout: ExpectedTensor[]): ExpectedTensor[] {
  return layout.map((t) =>
    /^decoder\.mid\.attn_1\.(q|k|v|proj_out)\.weight$/.test(t.name) ? { ...t, shape: [...t.shape, 1, 1] } : t
  );
}

const has = (store: TensorStore, name: string) => store.tensors.some((t) => t.name === name);

/**
 * The DiT's tensors under official names, from an official or a ComfyUI checkpoint, after checking
 * that it holds exactly the DiT's tensors with their shapes.
 *
 * @param store the checkpoint (a `transformer/` directory, or a single ComfyUI file)
 * @param config the DiT config
 * @returns a store under official names (a fused qkv is split on read)
 * @throws Error naming every missing, mis-shaped and unexpected tensor
 *
 * @example
 * ```ts
 * import { openDit, Z_IMAGE_TURBO } from "@xpu/ops/models/zimage";
 * import { bytesSource, encodeSafetensors, SafetensorsFile } from "@xpu/ops/llm";
 * const empty = await SafetensorsFile.open(bytesSource(encodeSafetensors([])));
 * try {
 *   openDit(empty, Z_IMAGE_TURBO.dit);
 * } catch (e) {
 *   (e as Error).message; // "Z-Image DiT checkpoint: 521 tensors missing: x_pad_token; cap_pad_token; ..."
 * }
 * ```
 */
export function openDit(store: TensorStore, config: DitConfig): TensorStore {
  const expected = ditTensors(config);
  const comfy = has(store, "x_embedder.weight") || has(store, "model.diffusion_model.x_embedder.weight");
  if (!comfy) {
    checkTensorLayout(store, expected, "Z-Image DiT checkpoint");
    return store;
  }
  const prefix = has(store, "x_embedder.weight") ? "" : "model.diffusion_model.";
  checkTensorLayout(store, storedLayout(expected, DIT_COMFYUI_RULES, prefix), "Z-Image DiT checkpoint (ComfyUI names)");
  return new MappedStore(store, expected, DIT_COMFYUI_RULES, prefix);
}

/**
 * The VAE decoder's tensors (official names without `decoder.`), from a diffusers `vae/` file or
 * FLUX.1's `ae.safetensors`, after checking the decoder's tensors; encoder tensors are left alone.
 *
 * @param store the checkpoint
 * @param config the VAE config
 * @returns a store under official names without `decoder.`
 * @throws Error naming every missing, mis-shaped and unexpected decoder tensor
 *
 * @example
 * ```ts
 * import { openVaeDecoder, Z_IMAGE_TURBO } from "@xpu/ops/models/zimage";
 * import { bytesSource, encodeSafetensors, SafetensorsFile } from "@xpu/ops/llm";
 * const empty = await SafetensorsFile.open(bytesSource(encodeSafetensors([])));
 * try {
 *   openVaeDecoder(empty, Z_IMAGE_TURBO.vae);
 * } catch (e) {
 *   (e as Error).message; // "Z-Image VAE checkpoint: 138 tensors missing: decoder.conv_in.weight; ..."
 * }
 * ```
 */
export function openVaeDecoder(store: TensorStore, config: VaeConfig): TensorStore {
  const expected = decoderTensors(config);
  const ignore = (name: string) => !name.startsWith("decoder.");
  if (!has(store, "decoder.mid.block_1.conv1.weight")) {
    const full = expected.map((t) => ({ name: `decoder.${t.name}`, shape: t.shape }));
    checkTensorLayout(store, full, "Z-Image VAE checkpoint", { ignore });
    return scopedStore(store, "decoder.");
  }
  const rules = vaeBflRules(config.blockOutChannels.length);
  const layout = reshapedForBfl(storedLayout(expected, rules, "decoder."));
  checkTensorLayout(store, layout, "Z-Image VAE checkpoint (FLUX.1 AE names)", { ignore });
  return new MappedStore(store, expected, rules, "decoder.");
}
