/**
 * Qwen3's KV cache and the attention of one new token against it, as ops.
 *
 * Per layer, K and V are `[kvHeads, capacity, head_dim]` f32 (the layout ops/gqa reads), allocated
 * for the whole generation up front. A prompt's keys and values (`[kvHeads, n, head_dim]`, after
 * RoPE) and then each new token's are written at their positions by scatter's `indexCopy`
 * (`cache.index_copy_(1, positions, k)`), the positions being the same i32 tensor RoPE reads.
 *
 * A new token attends through ops/gqa's decode path (split keys, then combine) over the whole
 * capacity with an additive mask `[capacity]`: 0 for positions written so far, -Infinity beyond,
 * which the caller extends by one 0 per step (the causal LM's decode program writes it at the
 * token's position with scatter's `indexCopy`, the position read on the GPU). So one decode program
 * serves every position, at the cost of reading the whole capacity each step (the positions not yet
 * written are masked, not skipped).
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { gqaPlan } from "../../ops/gqa/mod.ts";
import { indexCopyPlan } from "../../ops/scatter/mod.ts";
import type { QkvBuffers } from "./attention.ts";
import type { Qwen3Config } from "./config.ts";
import { bindingBytes } from "../../harness/limits.ts";
import type { Step, Workspace } from "./steps.ts";

/** The caches of every layer, and the mask of the positions written. */
export interface KvCache {
  /** Positions each layer's cache holds. */
  readonly capacity: number;
  /** Per layer: K and V, `[kvHeads, capacity, head_dim]`. */
  readonly layers: readonly { readonly k: GpuTensor; readonly v: GpuTensor }[];
  /** `[capacity]`: 0 where a position is written, -Infinity elsewhere (the caller keeps it so). */
  readonly mask: GpuTensor;
}

/**
 * Allocates a cache, the mask all -Infinity.
 *
 * @param gpu the device
 * @param work where the cache is allocated
 * @param config the model
 * @param layers layers to cache
 * @param capacity positions
 * @returns the cache
 * @throws Error when one layer's K is over the binding limit, naming the capacity that would fit
 */
export function allocKvCache(
  gpu: ResidentDevice,
  work: Workspace,
  config: Qwen3Config,
  layers: number,
  capacity: number,
): KvCache {
  const perPosition = config.numKeyValueHeads * config.headDim * 4;
  const limit = bindingBytes(gpu.limits);
  if (capacity * perPosition > limit) {
    throw new Error(
      `qwen3: a KV cache of ${capacity} positions is ${
        capacity * perPosition
      } bytes a layer for K (and as much for V), ` +
        `over this device's binding limit of ${limit}: at most ${Math.floor(limit / perPosition)} positions`,
    );
  }
  const n = capacity * config.numKeyValueHeads * config.headDim;
  return {
    capacity,
    layers: Array.from({ length: layers }, (_, i) => ({
      k: work.alloc("f32", n, `layer ${i} K cache`),
      v: work.alloc("f32", n, `layer ${i} V cache`),
    })),
    mask: work.upload(new Float32Array(capacity).fill(-Infinity), "KV cache mask"),
  };
}

/**
 * Writes `n` positions' keys and values, `[kvHeads, n, head_dim]` each, into a layer's cache at the
 * positions `index` (i32 `[n]`) holds.
 *
 * @param gpu the device
 * @param config the model
 * @param cache the cache
 * @param layer the layer
 * @param n positions written
 * @param k keys, head-major
 * @param v values, head-major
 * @param index their positions
 * @returns the steps
 */
export function cacheWriteSteps(
  gpu: ResidentDevice,
  config: Qwen3Config,
  cache: KvCache,
  layer: number,
  n: number,
  k: GpuTensor,
  v: GpuTensor,
  index: GpuTensor,
): Step[] {
  const plan = indexCopyPlan(gpu, {
    outer: config.numKeyValueHeads,
    rows: cache.capacity,
    cols: config.headDim,
    indexLength: n,
  });
  return [[plan, [k, index, cache.layers[layer].k]], [plan, [v, index, cache.layers[layer].v]]];
}

/** gqa decode's partial results, shared by every layer. */
export interface DecodeBuffers {
  readonly partOut: GpuTensor;
  readonly partStats: GpuTensor;
}

function decodePlans(gpu: ResidentDevice, config: Qwen3Config, capacity: number) {
  const { numAttentionHeads: H, numKeyValueHeads: kvHeads, headDim: D } = config;
  return gqaPlan(gpu, { B: 1, H, kvHeads, L: 1, S: capacity, D, maskShape: [1, 1, 1, capacity] }, { path: "decode" });
}

/**
 * Allocates gqa decode's partials for a capacity.
 *
 * @param gpu the device
 * @param work where they are allocated
 * @param config the model
 * @param capacity the cache's positions
 * @returns the buffers
 */
export function decodeBuffers(
  gpu: ResidentDevice,
  work: Workspace,
  config: Qwen3Config,
  capacity: number,
): DecodeBuffers {
  const [decode] = decodePlans(gpu, config, capacity).steps;
  const [, , , , partOut, partStats] = decode.bindings;
  return {
    partOut: work.alloc("f32", partOut.length, "attention partial outputs"),
    partStats: work.alloc("f32", partStats.length, "attention partial statistics"),
  };
}

/**
 * One token's attention against the cache: its key and value (`[kvHeads, head_dim]`, the same
 * memory as `[1, kvHeads, head_dim]`) written at `position`, then gqa decode over the capacity under
 * the cache's mask, into `o` `[heads · head_dim]`.
 *
 * @param gpu the device
 * @param config the model
 * @param cache the cache
 * @param layer the layer
 * @param qkv the token's rotated q, k and v
 * @param position the token's position, i32 `[1]`
 * @param o the output
 * @param buf gqa decode's partials
 * @returns the steps
 */
export function decodeAttentionSteps(
  gpu: ResidentDevice,
  config: Qwen3Config,
  cache: KvCache,
  layer: number,
  qkv: QkvBuffers,
  position: GpuTensor,
  o: GpuTensor,
  buf: DecodeBuffers,
): Step[] {
  const [decode, combine] = decodePlans(gpu, config, cache.capacity).steps;
  const { k, v } = cache.layers[layer];
  return [
    ...cacheWriteSteps(gpu, config, cache, layer, 1, qkv.k, qkv.v, position),
    [decode, [qkv.q, k, v, cache.mask, buf.partOut, buf.partStats]],
    [combine, [buf.partOut, buf.partStats, o]],
  ];
}
