/**
 * What a `LlamaEngine` will hold on the GPU, from the config and the weight format alone:
 * the weights as the engine stores them (Q/K/V and gate/up fused, every matrix cut into row blocks
 * within one binding, a scale buffer beside each quantized block, a tied head counted once), the
 * KV cache, and the activations (buffers of a prefill chunk's rows, the logits, attention's
 * partials, the sampler's buffers). The engine computes it before it allocates anything and refuses
 * a load whose total is over `maxResidentBytes`, with the bytes of each part; it is also a figure a
 * caller can compare with the memory it means to spend. The params uniforms of the engine's
 * programs (tens of bytes each, made as programs are built) are not counted.
 *
 * @module
 */

import type { LlamaConfig } from "./config.ts";
import type { WeightFormat } from "../../llm/weights/format.ts";
import { blockRows, rowBytes } from "./resident.ts";

/** Bytes an engine will hold, by part. */
export interface ResidentEstimate {
  /** The weights as stored (blocks, scales and norms, each buffer padded to 16 bytes). */
  weights: number;
  /** The KV cache: keys and values of every layer for `maxSeq` positions. */
  kvCache: number;
  /** The activation buffers. */
  activations: number;
  /** The sum. */
  total: number;
}

/** The sizes the engine derives from its options and the device's limits, which the estimate needs. */
export interface EstimateSizes {
  /** Positions the KV cache holds. */
  maxSeq: number;
  /** Rows of a prefill chunk. */
  chunkRows: number;
  /** Rows of a forward chunk's logits. */
  logitRows: number;
  /** Slices of decode attention. */
  attentionSplits: number;
  /** Bytes one binding may hold (the smaller of maxStorageBufferBindingSize and maxBufferSize). */
  bindingLimit: number;
  /**
   * What prefill's products multiply (the engine's `prefillActivations`): with `"int8"`, a chunk's
   * rows of the widest product input as int8 codes and a scale per row are held too. Default f32.
   */
  prefillActivations?: "f32" | "int8";
}

/** A buffer's bytes as the engine allocates it: whole 16-byte units, at least one. */
const padded = (bytes: number) => Math.max(16, Math.ceil(bytes / 16) * 16);

/**
 * Estimates the bytes an engine of this config, format and sizes will hold once loaded.
 *
 * @param config the model
 * @param format the weight format
 * @param sizes the sizes the engine derives (maxSeq, chunk rows, splits, the binding limit)
 * @returns the bytes of the weights, the KV cache and the activations, and their total
 * @throws Error when one row of a matrix is over the binding limit (as the load would)
 *
 * @example
 * ```ts
 * import { estimateResidentBytes, TINY_CONFIG } from "@xpu/ops/models/llama";
 * const sizes = { maxSeq: 64, chunkRows: 64, logitRows: 8, attentionSplits: 2, bindingLimit: 128 << 20 };
 * const { weights, kvCache, total } = estimateResidentBytes(TINY_CONFIG, "q8", sizes);
 * ```
 */
export function estimateResidentBytes(
  config: LlamaConfig,
  format: WeightFormat,
  sizes: EstimateSizes,
): ResidentEstimate {
  const { hiddenSize: H, intermediateSize: F, vocabSize: V, headDim: D, numHiddenLayers: layers } = config;
  const heads = config.numAttentionHeads, kv = config.numKeyValueHeads;
  const qDim = heads * D, qkvDim = qDim + 2 * kv * D;
  const { maxSeq, chunkRows: R, logitRows, attentionSplits: splits, bindingLimit: limit } = sizes;
  // Rows of a matrix's largest block, and its bytes as stored, block by block.
  const matrix = (N: number, K: number, unit = 1) => {
    const per = blockRows(format, K, N, limit, unit);
    const bytes = rowBytes(format, K);
    let total = 0;
    for (let row0 = 0; row0 < N; row0 += per) {
      const rows = Math.min(per, N - row0);
      total += padded(rows * bytes.weight) + (bytes.scales > 0 ? padded(rows * bytes.scales) : 0);
    }
    return { per, blocks: Math.ceil(N / per), bytes: total };
  };
  const layer = { qkv: matrix(qkvDim, H), o: matrix(H, qDim), gateUp: matrix(2 * F, H, 2), down: matrix(H, F) };
  const embedding = matrix(V, H);
  const perLayer = layer.qkv.bytes + layer.o.bytes + layer.gateUp.bytes + layer.down.bytes + 2 * padded(4 * H);
  const weights = embedding.bytes + (config.tieWordEmbeddings ? 0 : embedding.bytes) + padded(4 * H) +
    layers * perLayer;
  const kvCache = 2 * layers * padded(kv * maxSeq * D * 4);
  // The scratch a split (or, in f32, every) product's block output goes through.
  const scratched = [layer.qkv, layer.o, layer.down, ...(format === "f32" ? [layer.gateUp] : [])];
  let scratch = 0;
  for (const m of scratched) if (m.blocks > 1 || format === "f32") scratch = Math.max(scratch, R * m.per);
  if (embedding.blocks > 1 || format === "f32") scratch = Math.max(scratch, logitRows * embedding.per);
  const elements = [
    Math.max(R, 4), // ids
    R * H, // x
    R * H, // xn
    H, // xlast
    R * Math.max(qkvDim, qDim, 2 * F), // wide: at most all of gate/up's columns
    R * Math.max(H, qDim, F), // narrow
    R * H, // o
    logitRows * V, // logits
    scratch,
    format === "f32" ? R * Math.max(H, qDim, F) : 4, // xt
    maxSeq * D, // rope
    4, // state
    maxSeq, // tokens
    heads * splits * (D + 2), // partial
    heads, // counters
    V, // argmax partials: at most one pair per slice of the vocabulary
    2, // argmax counter
    V, // probs
    8, // sampler options
    Math.ceil(V / 32), // mask
    // int8 prefill: the quantised input (four codes a word) and its row scales
    ...(sizes.prefillActivations === "int8" ? [R * Math.ceil(Math.max(H, qDim, F) / 4), R] : []),
  ];
  const activations = elements.reduce((s, n) => s + padded(4 * n), 0);
  return { weights, kvCache, activations, total: weights + kvCache + activations };
}

/**
 * Refuses an estimate over a budget, naming the bytes of each part and the budget.
 *
 * @param where who asks, for the message
 * @param estimate the estimate
 * @param maxResidentBytes the budget (`undefined`: no budget)
 * @throws Error when the budget is not a positive number, or the estimate's total is over it
 *
 * @example
 * ```ts
 * import { checkResidentBudget } from "@xpu/ops/models/llama";
 * const estimate = { weights: 3e9, kvCache: 2e8, activations: 5e7, total: 3.25e9 };
 * checkResidentBudget("LlamaEngine.load", estimate, 4 * 2 ** 30); // passes
 * try {
 *   checkResidentBudget("LlamaEngine.load", estimate, 2 ** 30);
 * } catch (e) {
 *   (e as Error).message; // "LlamaEngine.load: the engine needs 3250000000 bytes (weights ..., over maxResidentBytes 1073741824"
 * }
 * ```
 */
export function checkResidentBudget(where: string, estimate: ResidentEstimate, maxResidentBytes?: number): void {
  if (maxResidentBytes === undefined) return;
  if (typeof maxResidentBytes !== "number" || !(maxResidentBytes > 0)) {
    throw new Error(`${where}: maxResidentBytes must be a number > 0, got ${String(maxResidentBytes)}`);
  }
  if (estimate.total > maxResidentBytes) {
    throw new Error(
      `${where}: the engine needs ${estimate.total} bytes (weights ${estimate.weights}, KV cache ${estimate.kvCache}, ` +
        `activations ${estimate.activations}), over maxResidentBytes ${maxResidentBytes}`,
    );
  }
}
