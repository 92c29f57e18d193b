/**
 * A Qwen3's weights on the GPU: read tensor by tensor from a checkpoint (only one tensor's f32 values
 * held on the host at a time), norms as f32, matrices as `linear.ts` stores them (f32 as they are, or
 * q8 quantised on the GPU), the embedding (and an untied head) as `embedding.ts`'s row blocks.
 *
 * A caller that needs only part of the model loads only that part: Z-Image's encoder, which takes
 * `hidden_states[-2]`, loads the first 35 of Qwen3-4B's 36 layers and no final norm, and no embedding
 * table when it gathers the prompt's rows on the host; the checkpoint is still checked whole first
 * (`weights.ts`).
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import type { Qwen3Config } from "./config.ts";
import { destroyTable, type EmbeddingTable, uploadTable } from "./embedding.ts";
import { destroyLinear, type Linear, uploadLinear } from "../linear.ts";
import { QWEN3_FORMATS, type Qwen3Format } from "./linear.ts";
import { layerTensorNames, type Qwen3Checkpoint } from "./weights.ts";

/** One decoder layer's weights. */
export interface Qwen3LayerWeights {
  /** `input_layernorm.weight` `[hidden]`. */
  readonly inputNorm: GpuTensor;
  /** `self_attn.q_norm.weight` `[head_dim]`. */
  readonly qNorm: GpuTensor;
  /** `self_attn.k_norm.weight` `[head_dim]`. */
  readonly kNorm: GpuTensor;
  /** `post_attention_layernorm.weight` `[hidden]`. */
  readonly postNorm: GpuTensor;
  /** The projections. */
  readonly q: Linear;
  readonly k: Linear;
  readonly v: Linear;
  readonly o: Linear;
  readonly gate: Linear;
  readonly up: Linear;
  readonly down: Linear;
}

/** What of a Qwen3 is on the GPU. */
export interface Qwen3Weights {
  /** The model. */
  readonly config: Qwen3Config;
  /** How the layers' matrices are stored. */
  readonly format: Qwen3Format;
  /** `embed_tokens.weight`, f32 row blocks; null when not loaded. */
  readonly embedding: EmbeddingTable | null;
  /** The first `layers.length` decoder layers. */
  readonly layers: readonly Qwen3LayerWeights[];
  /** `norm.weight`, when loaded. */
  readonly norm: GpuTensor | null;
  /** The untied head `[vocab, hidden]` in row blocks, when loaded; null when tied (the embedding) or not loaded. */
  readonly head: EmbeddingTable | null;
}

/** Options of {@link loadQwen3Weights}. */
export interface LoadQwen3Options {
  /** How to store the layers' matrices (default f32). */
  format?: Qwen3Format;
  /** How many decoder layers to load, from the first (default all). */
  layers?: number;
  /** Whether to load the final norm (default true). */
  norm?: boolean;
  /** Whether to load the embedding table (default true; false for an encoder that looks rows up on the host). */
  embedding?: boolean;
  /** Whether to load an untied head (default false; a tied head is the embedding, loaded anyway). */
  head?: boolean;
  /** Called after each tensor with bytes of the checkpoint read so far and to read in all. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
}

/**
 * Loads (part of) a Qwen3 onto the GPU.
 *
 * @param gpu the device
 * @param checkpoint the checkpoint, resolved and checked by `openQwen3Checkpoint`
 * @param config the model
 * @param options format, how much to load, progress
 * @returns the resident weights (free them with {@link destroyQwen3Weights})
 * @throws Error for a bad option, a matrix over the binding limit, or (q8) a non-finite weight;
 *   what was uploaded before the error is freed
 */
export async function loadQwen3Weights(
  gpu: ResidentDevice,
  checkpoint: Qwen3Checkpoint,
  config: Qwen3Config,
  options: LoadQwen3Options = {},
): Promise<Qwen3Weights> {
  const format = options.format ?? "f32";
  if (!QWEN3_FORMATS.includes(format)) {
    throw new Error(`qwen3: format must be one of ${QWEN3_FORMATS.join(", ")}, got ${String(format)}`);
  }
  const count = options.layers ?? config.numHiddenLayers;
  if (!Number.isInteger(count) || count < 0 || count > config.numHiddenLayers) {
    throw new Error(`qwen3: layers must be an integer in [0, ${config.numHiddenLayers}], got ${count}`);
  }
  const wantNorm = options.norm ?? true;
  const wantHead = (options.head ?? false) && checkpoint.lmHead !== null;
  const { model } = checkpoint;
  const wantEmbedding = options.embedding ?? true;
  const names = wantEmbedding ? ["embed_tokens.weight"] : [];
  for (let i = 0; i < count; i++) names.push(...Object.values(layerTensorNames(i)));
  if (wantNorm) names.push("norm.weight");
  const sizeOf = (store: typeof model, name: string) => {
    const info = store.info(name);
    return info.end - info.begin;
  };
  const bytesTotal = names.reduce((s, n) => s + sizeOf(model, n), 0) +
    (wantHead ? sizeOf(checkpoint.store, checkpoint.lmHead!) : 0);
  let bytesDone = 0;
  const owned: { tensors: GpuTensor[]; linears: Linear[]; tables: EmbeddingTable[] } = {
    tensors: [],
    linears: [],
    tables: [],
  };
  const read = async (name: string, store = model) => {
    const values = await store.readFloat32(name);
    bytesDone += sizeOf(store, name);
    return values;
  };
  const progress = async () => {
    options.onProgress?.(bytesDone, bytesTotal);
    // writeBuffer stages its copy until a later submission completes: wait, so no more than one
    // layer of staged bytes is held.
    gpu.device.queue.submit([]);
    await gpu.device.queue.onSubmittedWorkDone();
  };
  const vector = async (name: string) => {
    const t = gpu.upload(await read(name), name);
    owned.tensors.push(t);
    return t;
  };
  const matrix = async (name: string) => {
    const [N, K] = model.info(name).shape;
    const l = await uploadLinear(gpu, await read(name), N, K, { label: name, format });
    owned.linears.push(l);
    return l;
  };
  const table = async (name: string, store = model) => {
    const [rows, cols] = store.info(name).shape;
    const t = uploadTable(gpu, name, await read(name, store), rows, cols);
    owned.tables.push(t);
    return t;
  };
  try {
    const embedding = wantEmbedding ? await table("embed_tokens.weight") : null;
    await progress();
    const layers: Qwen3LayerWeights[] = [];
    for (let i = 0; i < count; i++) {
      const n = layerTensorNames(i);
      layers.push({
        inputNorm: await vector(n.inputNorm),
        qNorm: await vector(n.qNorm),
        kNorm: await vector(n.kNorm),
        postNorm: await vector(n.postNorm),
        q: await matrix(n.q),
        k: await matrix(n.k),
        v: await matrix(n.v),
        o: await matrix(n.o),
        gate: await matrix(n.gate),
        up: await matrix(n.up),
        down: await matrix(n.down),
      });
      await progress();
    }
    const norm = wantNorm ? await vector("norm.weight") : null;
    const head = wantHead ? await table(checkpoint.lmHead!, checkpoint.store) : null;
    await progress();
    return { config, format, embedding, layers, norm, head };
  } catch (e) {
    owned.tensors.forEach((t) => t.buffer.destroy());
    owned.linears.forEach(destroyLinear);
    owned.tables.forEach(destroyTable);
    throw e;
  }
}

/**
 * Frees every tensor of loaded weights.
 *
 * @param w the weights
 */
export function destroyQwen3Weights(w: Qwen3Weights): void {
  if (w.embedding) destroyTable(w.embedding);
  if (w.head) destroyTable(w.head);
  w.norm?.buffer.destroy();
  for (const l of w.layers) {
    [l.inputNorm, l.qNorm, l.kNorm, l.postNorm].forEach((t) => t.buffer.destroy());
    [l.q, l.k, l.v, l.o, l.gate, l.up, l.down].forEach(destroyLinear);
  }
}

/**
 * Bytes of loaded weights on the GPU.
 *
 * @param w the weights
 * @returns bytes
 */
export function qwen3WeightBytes(w: Qwen3Weights): number {
  const tensors: GpuTensor[] = [
    ...(w.embedding?.blocks.map((b) => b.table) ?? []),
    ...(w.head?.blocks.map((b) => b.table) ?? []),
  ];
  if (w.norm) tensors.push(w.norm);
  for (const l of w.layers) {
    tensors.push(l.inputNorm, l.qNorm, l.kNorm, l.postNorm);
    for (const m of [l.q, l.k, l.v, l.o, l.gate, l.up, l.down]) tensors.push(m.weight, ...(m.scales ? [m.scales] : []));
  }
  return tensors.reduce((s, t) => s + t.buffer.size, 0);
}
