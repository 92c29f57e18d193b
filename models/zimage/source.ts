/**
 * Where a Z-Image checkpoint's files are, and how they are opened: the diffusers directory
 * (`transformer/`, `vae/`, `text_encoder/`, `tokenizer/`, sharded safetensors with their index
 * files and `config.json`s) or ComfyUI's three files (`z_image_turbo_bf16.safetensors`,
 * `ae.safetensors`, `qwen_3_4b.safetensors`, flat or under ComfyUI's `diffusion_models/`, `vae/`
 * and `text_encoders/`; Turbo's config is assumed, as those files carry none, and the tokenizer is
 * taken from a `tokenizer/` folder beside them when there is one).
 *
 * Files are reached through {@link ModelFiles}: a URL prefix answering range requests
 * ({@link urlFiles}), files in memory or Blobs ({@link memoryFiles}), or a directory on disk
 * (`directoryFiles` in `file.ts`, Deno only).
 *
 * @module
 */

import { type ByteSource, SafetensorsFile, type TensorStore } from "../../llm/safetensors.ts";
import { ShardedSafetensors } from "../../llm/safetensors_sharded.ts";
import { blobSource, bytesSource, urlSource } from "../../llm/safetensors_sources.ts";
import { loadQwenTokenizer } from "../../llm/tokenizer/qwen.ts";
import type { Tokenizer } from "../../llm/tokenizer/tokenizer.ts";
import { parseQwen3Config, type Qwen3Config } from "../qwen3/config.ts";
import { openQwen3Checkpoint } from "../qwen3/weights.ts";
import { parseDitConfig, parseVaeConfig, QWEN3_4B, Z_IMAGE_TURBO, type ZImageConfig } from "./config.ts";
import { openDit, openVaeDecoder } from "./weights.ts";

/** A model's files, by path under its root. */
export interface ModelFiles {
  /** For messages: a directory, a URL. */
  readonly name: string;
  /**
   * Opens a file.
   *
   * @param path relative to the model's root, `/`-separated
   * @returns the file, or null when there is none
   */
  open(path: string): Promise<ByteSource | null>;
}

/** A checkpoint opened and checked: every component under the names the port reads. */
export interface ZImageCheckpoint {
  /** The DiT's and the VAE's config. */
  config: ZImageConfig;
  /** The DiT's tensors, official names. */
  dit: TensorStore;
  /** The VAE decoder's tensors, official names without `decoder.`. */
  vae: TensorStore;
  /** The text encoder (Qwen3, checked against its config), when the checkpoint has it. */
  textEncoder?: { store: TensorStore; config: Qwen3Config };
  /** The text encoder's tokenizer, when the checkpoint has its files (`tokenizer/`). */
  tokenizer?: Tokenizer;
  /** Which layout the files had. */
  layout: "diffusers" | "comfyui";
}

/**
 * Files under a URL prefix, read with range requests (a missing file answers 404).
 *
 * @param base the model's root URL
 * @param fetchFn fetch (default the global one)
 * @returns the files
 *
 * @example
 * ```ts
 * import { urlFiles } from "@xpu/ops/models/zimage";
 * const files = urlFiles("https://example.com/Z-Image-Turbo"); // nothing is fetched until a file is opened
 * files.name; // "https://example.com/Z-Image-Turbo/"
 * ```
 */
export function urlFiles(base: string | URL, fetchFn: typeof fetch = fetch): ModelFiles {
  const root = String(base).replace(/\/?$/, "/");
  return {
    name: root,
    open: async (path) => {
      const head = await fetchFn(root + path, { method: "HEAD" });
      await head.body?.cancel();
      if (head.status === 404) return null;
      return await urlSource(root + path, fetchFn);
    },
  };
}

/**
 * Files held in memory (bytes or Blobs, e.g. files a user dropped on a page).
 *
 * @param files path → contents
 * @param name for messages
 * @returns the files
 *
 * @example
 * ```ts
 * import { memoryFiles } from "@xpu/ops/models/zimage";
 * const files = memoryFiles({ "vae/config.json": new TextEncoder().encode("{}") });
 * (await files.open("vae/config.json"))?.size; // 2
 * ```
 */
export function memoryFiles(files: Record<string, Uint8Array | Blob>, name = "<memory>"): ModelFiles {
  return {
    name,
    open: (path) => {
      const f = files[path];
      if (f === undefined) return Promise.resolve(null);
      return Promise.resolve(f instanceof Uint8Array ? bytesSource(f, path) : blobSource(f, path));
    },
  };
}

async function readText(files: ModelFiles, path: string): Promise<string | null> {
  const source = await files.open(path);
  return source ? new TextDecoder().decode(await source.read(0, source.size)) : null;
}

async function readJson(files: ModelFiles, path: string): Promise<Record<string, unknown> | null> {
  const text = await readText(files, path);
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${files.name}: ${path} is not JSON (${(e as Error).message})`);
  }
}

/** Opens `dir/<stem>.safetensors` or the shards `dir/<stem>.safetensors.index.json` names. */
async function openWeights(files: ModelFiles, dir: string, stem: string): Promise<TensorStore | null> {
  const index = await readText(files, `${dir}/${stem}.safetensors.index.json`);
  if (index !== null) {
    return await ShardedSafetensors.open(index, async (shard) => {
      const source = await files.open(`${dir}/${shard}`);
      if (!source) throw new Error(`${files.name}: ${dir}/${shard}, named by the index, is missing`);
      return source;
    });
  }
  const single = await files.open(`${dir}/${stem}.safetensors`);
  return single ? await SafetensorsFile.open(single) : null;
}

async function openFirst(files: ModelFiles, paths: readonly string[]): Promise<TensorStore | null> {
  for (const path of paths) {
    const source = await files.open(path);
    if (source) return await SafetensorsFile.open(source);
  }
  return null;
}

/** Candidate paths of ComfyUI's files: flat, or under ComfyUI's model folders. */
export const COMFYUI_FILES = {
  dit: ["z_image_turbo_bf16.safetensors", "diffusion_models/z_image_turbo_bf16.safetensors"],
  vae: ["ae.safetensors", "vae/ae.safetensors"],
  textEncoder: ["qwen_3_4b.safetensors", "text_encoders/qwen_3_4b.safetensors"],
} as const;

/** Qwen's tokenizer from `tokenizer/`: tokenizer.json, or vocab.json and merges.txt (with tokenizer_config.json). */
async function openTokenizer(files: ModelFiles): Promise<Tokenizer | undefined> {
  const config = await readText(files, "tokenizer/tokenizer_config.json");
  const json = await readText(files, "tokenizer/tokenizer.json");
  if (json !== null) return loadQwenTokenizer({ tokenizerJson: json, tokenizerConfig: config ?? undefined });
  const vocab = await readText(files, "tokenizer/vocab.json"), merges = await readText(files, "tokenizer/merges.txt");
  if (vocab === null || merges === null) return undefined;
  if (config === null) throw new Error(`${files.name}: tokenizer/vocab.json needs tokenizer/tokenizer_config.json`);
  return loadQwenTokenizer({ vocab, merges, tokenizerConfig: config });
}

/** The text encoder's store after models/qwen3 has checked it against the config. */
function checkedEncoder(store: TensorStore, config: Qwen3Config): { store: TensorStore; config: Qwen3Config } {
  openQwen3Checkpoint(store, config);
  return { store, config };
}

/**
 * Opens a Z-Image checkpoint and checks every component's tensors (names and shapes) before any
 * weight is read.
 *
 * @param files the model's files
 * @returns the checkpoint's stores under the port's names
 * @throws Error naming the file that is missing or the tensors that do not fit
 *
 * @example
 * ```ts
 * import { memoryFiles, openZImage } from "@xpu/ops/models/zimage";
 * try {
 *   await openZImage(memoryFiles({}));
 * } catch (e) {
 *   (e as Error).message; // "<memory>: neither a diffusers checkpoint (transformer/config.json) nor ComfyUI's files ..."
 * }
 * ```
 */
export async function openZImage(files: ModelFiles): Promise<ZImageCheckpoint> {
  const ditJson = await readJson(files, "transformer/config.json");
  if (ditJson) {
    const vaeJson = await readJson(files, "vae/config.json");
    if (!vaeJson) throw new Error(`${files.name}: transformer/config.json is there but vae/config.json is missing`);
    const config = { dit: parseDitConfig(ditJson), vae: parseVaeConfig(vaeJson) };
    const dit = await openWeights(files, "transformer", "diffusion_pytorch_model");
    const vae = await openWeights(files, "vae", "diffusion_pytorch_model");
    if (!dit || !vae) throw new Error(`${files.name}: no safetensors in ${dit ? "vae" : "transformer"}/`);
    const teJson = await readJson(files, "text_encoder/config.json");
    const te = teJson ? await openWeights(files, "text_encoder", "model") : null;
    if (teJson && !te) throw new Error(`${files.name}: text_encoder/config.json is there but no safetensors`);
    return {
      config,
      dit: openDit(dit, config.dit),
      vae: openVaeDecoder(vae, config.vae),
      textEncoder: te && teJson ? checkedEncoder(te, parseQwen3Config(teJson)) : undefined,
      tokenizer: await openTokenizer(files),
      layout: "diffusers",
    };
  }
  const dit = await openFirst(files, COMFYUI_FILES.dit);
  const vae = await openFirst(files, COMFYUI_FILES.vae);
  if (!dit || !vae) {
    throw new Error(
      `${files.name}: neither a diffusers checkpoint (transformer/config.json) nor ComfyUI's files (${
        [...COMFYUI_FILES.dit, ...COMFYUI_FILES.vae].join(", ")
      })`,
    );
  }
  const te = await openFirst(files, COMFYUI_FILES.textEncoder);
  const config = Z_IMAGE_TURBO;
  return {
    config,
    dit: openDit(dit, config.dit),
    vae: openVaeDecoder(vae, config.vae),
    textEncoder: te ? checkedEncoder(te, QWEN3_4B) : undefined,
    tokenizer: await openTokenizer(files),
    layout: "comfyui",
  };
}
