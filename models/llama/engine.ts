/**
 * LlamaEngine: a Llama forward on the GPU over resident weights, one engine for every weight
 * format (f32, q8, q4g128: the format is data). It computes what `reference.ts` defines and is held
 * to it, and to transformers' logits, by its tests. It holds no kernel of its own: every dispatch is
 * an op's plan (ops/fused_gemv, gqa's KV-cache path, sample, gather, rmsnorm's `residual`,
 * activation's `gated_pairs`, transpose's placements, matvec, matmul), bound once to the engine's
 * tensors (`gpu.bind`) into programs replayed every step (`gpu.program`, `program.encode`), the
 * pipelines from the device's one cache.
 *
 * - Weights stay as stored: decode (one row) multiplies through the engine's fused GEMVs
 *   (ops/fused_gemv: RMSNorm folded into the product's input, the residual add or SwiGLU into its
 *   output), prefill (a chunk of rows) through ops/matmul's quantised GEMMs, which decode the packed
 *   weight in-kernel (no dequantised f32 copy), or ops/matmul's f32 GEMM on the transposed product; the head, in
 *   both, through ops/matvec's GEMV. With `prefillActivations: "int8"` (q8, q4g128), a prefill
 *   product's input is quantised per row to int8 (ops/quantize's `quantizePackedPlan`, into one
 *   resident buffer of a chunk's rows of the widest input, and a scale per row) and multiplied on
 *   integer dot products (ops/matmul's `matmulQ8Dp4a`, `matmulQ4G128Dp4a`); so is `forward`'s head,
 *   which runs on a chunk's rows, while `generate`'s head (the last row) and decode stay f32. Q, K
 *   and V are one fused `[q|k|v]` matrix, gate and up one matrix of interleaved rows, so a layer has
 *   two wide products instead of five.
 * - A weight larger than the device's maxStorageBufferBindingSize is kept as row blocks, each its
 *   own buffer within the limit. A fused GEMV writes a block's outputs where they belong; in
 *   prefill (and for the head) a block's product goes to a scratch buffer and is placed into its
 *   columns of the output (transpose's `placeColumns`), except prefill's quantised gate/up, which runs
 *   in pieces of its rows (`#ffnPieces`) each bound to its range of the weight (a tensor view) and
 *   followed by SiLU·mul. The embedding gather reads each block for the ids that fall in it. Activation buffers are kept within the limit by the prefill chunk's row count.
 * - The KV cache is preallocated, `[kvHeads, maxSeq, headDim]` per layer for K and for V. In prefill,
 *   RoPE and the cache write are one kernel after the QKV product; in decode they are part of the
 *   attention kernel, which is split along the cache (flash-decoding) and combined in the same
 *   dispatch by the last workgroup of each head.
 * - Each call's dispatches are built once per (rows, output) and reused: one program, encoded as one
 *   compute pass per chunk or step, bind groups and params made at build time, every dispatch checked
 *   against the device's limits then (a limit that would be exceeded is an error before any GPU work).
 * - Generation (`generate`) keeps the loop on the GPU: the choice (greedy, or seeded temperature,
 *   top-k, top-p and min-p as `sampleNext` defines them: ops/sample) is made by a kernel that
 *   writes the id where the next step's embedding gather reads it and advances the position in the
 *   `state` buffer, so every decode step is the same command sequence, submitted back to back
 *   without waiting; ids come back through llm's `TokenRing`, a ring of staging buffers whose maps
 *   overlap the steps after them. End-of-sequence is recognised as ids arrive; steps already submitted past it are
 *   discarded, never yielded.
 *
 * Dispatches per decode layer: QKV (with the input norm), attention (with RoPE and the cache write),
 * O (with the residual add), gate/up (with the post-attention norm and SwiGLU), down (with the
 * residual add): 5. Prefill's layers keep the products apart from their neighbours: norm (with the
 * residual add), QKV, RoPE and the cache write, attention, O, norm, gate/up, SiLU·mul, down: 9 in f32;
 * 11 in q8 and q4g128, whose gate/up and SiLU·mul run in two pieces (`#ffnPieces`); 15 with
 * `prefillActivations: "int8"`, which quantises each product's input once before it (QKV's `xn`, O's
 * attention output, gate/up's `xn`, shared by its pieces, down's SiLU·mul output).
 * Plus the embedding gather, the final norm, the head and the sampler per step (greedy or seeded:
 * one dispatch either way; one more, the mask, with a constraint; more when a weight is split).
 *
 * @module
 */

import {
  type GpuTensor,
  type KernelPlan,
  requireDevice,
  type ResidentDevice,
  type TensorDtype,
  tensorView,
} from "../../harness/device.ts";
import type { BoundDispatch, Program } from "../../harness/program.ts";
import type { LlamaConfig } from "./config.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { requireWeightFormat, type WeightFormat } from "../../llm/weights/format.ts";
import { checkResidentBudget, estimateResidentBytes, type ResidentEstimate } from "./estimate.ts";
import { type LoadedWeight, type LoadProgress, quantizeRowsGpu } from "../../llm/weights/load.ts";
import { loadWeights, planLoad } from "./weights.ts";
import {
  argmaxTokenPlan,
  maskLogitsPlan,
  NONFINITE_LOGITS,
  packSampleOptions,
  sampleTokenPlan,
  validateSampleOptions,
} from "../../ops/sample/mod.ts";
import {
  CACHE_MAX_HEAD_DIM as MAX_HEAD_DIM,
  CACHE_MAX_SPLITS as MAX_ATTENTION_SPLITS,
  gqaCacheDecodePlan,
  gqaCachePrefillPlan,
} from "../../ops/gqa/mod.ts";
import { checkKeys } from "../../ops/validate.ts";
import { gatherBlocksPlan, gatherQuantizedBlocksPlan } from "../../ops/gather/mod.ts";
import { RESIDUAL_MAX_COLS, rmsnormResidualPlan } from "../../ops/rmsnorm/mod.ts";
import { swigluPairsPlan } from "../../ops/activation/mod.ts";
import { placeColumnsPlan, transposePlan } from "../../ops/transpose/mod.ts";
import { gemmDp4a, gemmF32Transposed, gemmQuantized, gemv, type ProductKernel, type ProductSlot } from "./ops.ts";
import { quantizePackedPlan } from "../../ops/quantize/mod.ts";
import { bindingBytes } from "../../harness/limits.ts";
import { type Activations, checkActivations } from "../linear.ts";
import { dispatchTimes, timestampPasses } from "../../harness/timing.ts";
import { type FusedGemvInput, type FusedGemvOutput, fusedGemvPlan } from "../../ops/fused_gemv/mod.ts";
import { ropeCosSin, ropeFrequencies } from "./rope.ts";
import type { SamplerOptions } from "../../llm/sampler.ts";
import type { Constraint } from "../../llm/constraints/constraint.ts";
import { TokenRing, tokenRingGrouping } from "../../llm/token_ring.ts";
import { ErrorScopeBatch } from "../../llm/error_scopes.ts";
import {
  type Block,
  blockRows,
  type LayerWeights,
  type Matrix,
  type ResidentWeights,
  rowBytes,
  uploadWeights,
  weightBytes,
} from "./resident.ts";

/** Options of {@link LlamaEngine.load}. */
export interface LlamaEngineOptions {
  /**
   * The weight format (a converted checkpoint's own; for an HF checkpoint, quantised on load on the
   * GPU by ops/quantize's `packed` (q8) and `packed_q4` (q4g128) kernels, the converter's bytes
   * exactly). Default: a converted checkpoint's recorded format, else f32.
   */
  format?: WeightFormat;
  /** Positions the KV cache holds (prompt plus generated tokens). Default 512. */
  maxSeq?: number;
  /** Rows of a prefill chunk at most (fewer where an activation would exceed the binding limit). Default 512. */
  prefillChunk?: number;
  /**
   * Slices of the cache decode attention is split into (flash-decoding), at most 128. Default
   * `ceil(maxSeq / 48)`, at most 32 (on the H200 at 16/8 heads of 112, 8-16 slices were fastest at
   * 128-512 positions, 24-32 at 1,536: `harness/baselines/nvidia-h200-llm.md`).
   */
  attentionSplits?: number;
  /** Loading progress: bytes of tensor data read so far and in all. */
  onProgress?: LoadProgress;
  /** Positions an attention workgroup scores at once, 1 to 1,024 (default); fewer only to test the online softmax. */
  attentionChunk?: number;
  /**
   * Bytes the engine may hold on the GPU (weights, KV cache, activations: {@link LlamaEngine.estimate}),
   * checked from the config and the format before anything is read or allocated. Default: no limit.
   */
  maxResidentBytes?: number;
  /**
   * What prefill's weight products (a chunk of more than one row) multiply: `"f32"` (default) the
   * activations as they are; `"int8"` each product's input quantised per row to int8 (ops/quantize's
   * `quantizePackedPlan`, once per input: gate/up's pieces share `xn`'s), multiplied through
   * ops/matmul's integer-dot-product GEMMs (`matmulQ8Dp4a`, `matmulQ4G128Dp4a`). Decode steps
   * (one row, the fused GEMVs) and the last row's head in `generate` stay f32; `forward`'s head, on
   * several rows, goes through the int8 path too. For q8 and q4g128 weights only, on an adapter whose
   * WGSL has `packed_4x8_integer_dot_product`; refused otherwise at load, before any allocation.
   * The cost in accuracy: models/fortune/README.md (+0.036% held-out perplexity in q8, +0.022% in q4g128).
   */
  prefillActivations?: PrefillActivations;
}

/** What prefill's weight products multiply: f32 activations, or int8 ones (integer dot products). */
export type PrefillActivations = Activations;

/**
 * How `generate` chooses tokens: `sampleNext`'s options (llm/sampler.ts), greedy or seeded
 * temperature/top-k/top-p/min-p, both on the GPU (ops/sample says where the f32 kernel and the
 * f64 reference can differ).
 */
export type SamplerSpec = SamplerOptions;

/** Options of {@link LlamaEngine.generate}. */
export interface GenerateOptions {
  /** Tokens to generate at most (the first comes from the prompt's last position). */
  maxTokens: number;
  /** The sampler; default greedy. */
  sampler?: SamplerSpec;
  /**
   * A rule on the next token (llm/constraints), applied as `sampleNext` applies it: ids outside
   * `nextAllowed(generatedSoFar)` get logit -Infinity before the choice, on the GPU, from a bitset
   * the host uploads before each step. The set depends on the ids generated so far, so each step
   * waits for the previous id to be read back (`readEvery` and `inFlight` are 1): a fence per token
   * (DESIGN.md measures ~11 ms of latency each on the H200) plus `nextAllowed` on the host and a
   * `vocab / 8`-byte upload, and one more dispatch per step (the mask).
   */
  constraint?: Constraint;
  /** Stops generation: the iterator throws the signal's reason. */
  signal?: AbortSignal;
  /**
   * Decode steps whose ids come back in one readback (one `mapAsync`). Default 16: a readback per
   * step makes the host's submission of later steps wait on it (measured on the H200: each step
   * cost its GPU time plus ~1.2 ms), so steps are read in groups. The first token is read alone,
   * as soon as the prompt is done. 1 with a constraint.
   */
  readEvery?: number;
  /** Readbacks in flight at once (the staging ring's size). Default 4; 1 with a constraint. */
  inFlight?: number;
  /** Filled in as generation runs: host time spent encoding and submitting, steps submitted. */
  stats?: GenerateStats;
}

/** What {@link LlamaEngine.generate} measured on the host. */
export interface GenerateStats {
  /** Milliseconds spent building command buffers and submitting them, prefill included. */
  encodeMs: number;
  /** Decode steps submitted (including any discarded after an end-of-sequence id). */
  decodeSteps: number;
  /** Milliseconds spent on decode steps' encoding and submission alone. */
  decodeEncodeMs: number;
}

/** A layer's weights and its KV cache. */
interface Layer extends LayerWeights {
  keys: GpuTensor;
  values: GpuTensor;
}

/** A dispatch of a call being built: bound to its tensors, with its label for {@link LlamaEngine.profile}. */
interface Step {
  label: string;
  bound: BoundDispatch;
}

/** A call's dispatches, bound once and replayed: the program and each step's label. */
interface Built {
  program: Program;
  labels: string[];
}

/** Rows `[row0, row0 + rows)` of a matrix: a row block, or a view of a range of one. */
type Piece = Block;

/**
 * What a program ends with: every row's logits, the last row's greedy choice ("argmax") or seeded
 * draw ("draw"), or nothing (cache only).
 */
type Output = "logits" | "argmax" | "draw" | "cache";

const STORAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;

/**
 * Programs an engine keeps (one per prompt-chunk length, output and mask it has run), the least recently
 * used destroyed past this: a long chat of many prompt lengths holds a bounded number of params
 * buffers. One call uses at most four (its chunk lengths and the decode step), all among the most
 * recent, so a call never loses a program it is running.
 */
const PROGRAMS_KEPT = 32;

/** The keys {@link LlamaEngineOptions} has (a misspelt one is refused, never ignored). */
const LOAD_OPTION_KEYS: readonly (keyof LlamaEngineOptions)[] = [
  "format",
  "maxSeq",
  "prefillChunk",
  "attentionSplits",
  "onProgress",
  "attentionChunk",
  "maxResidentBytes",
  "prefillActivations",
];

/** The keys {@link GenerateOptions} has. */
const GENERATE_OPTION_KEYS: readonly (keyof GenerateOptions)[] = [
  "maxTokens",
  "sampler",
  "constraint",
  "signal",
  "readEvery",
  "inFlight",
  "stats",
];

/**
 * The engine. Create one with {@link LlamaEngine.load} or {@link LlamaEngine.fromWeights}.
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { LlamaEngine, parseLlamaConfig } from "@xpu/ops/models/llama";
 * import { openCheckpointDir } from "@xpu/ops/llm/file";
 * const dir = "models/llama/fixtures/tiny-gqa/f32"; // a tiny random model; in practice a Hugging Face snapshot
 * const config = parseLlamaConfig(await Deno.readTextFile(`${dir}/config.json`));
 * const { store, close } = await openCheckpointDir(dir);
 * const gpu = await acquireDevice();
 * const engine = await LlamaEngine.load(gpu, store, config, { maxSeq: 32 });
 * close();
 * const ids: number[] = [];
 * for await (const id of engine.generate([5, 6, 7], { maxTokens: 4 })) ids.push(id);
 * engine.destroy();
 * gpu.destroy();
 * ```
 */
export class LlamaEngine {
  /** The model's shape. */
  readonly config: LlamaConfig;
  /** The weight format. */
  readonly format: WeightFormat;
  /** Positions the KV cache holds. */
  readonly maxSeq: number;
  /** Rows of a prefill chunk. */
  readonly chunkRows: number;
  /** Rows of a `forward` chunk (its logits must fit one binding too). */
  readonly logitRows: number;
  /** Slices of decode attention. */
  readonly attentionSplits: number;
  /** What prefill's weight products multiply (the `prefillActivations` option). */
  readonly prefillActivations: PrefillActivations;
  /** What the engine holds once loaded, estimated from the config and the format before the load allocates. */
  readonly estimate: ResidentEstimate;
  readonly #attentionChunk: number;
  readonly #gpu: ResidentDevice;
  /** Outcomes of the error scopes around buffer creation, examined at the end of a load. */
  readonly #allocations: Promise<void>[] = [];
  readonly #device: GPUDevice;
  readonly #owned: GPUBuffer[] = [];
  /**
   * The calls' programs, by rows, output and mask (pipelines come from the device's one cache), least
   * recently used first; at most {@link PROGRAMS_KEPT}.
   */
  readonly #programs = new Map<string, Built>();
  #embedding!: Matrix;
  #head!: Matrix;
  #finalNorm!: GpuTensor;
  #weights!: ResidentWeights;
  readonly #layers: Layer[] = [];
  readonly #act: Record<string, GpuTensor> = {};
  #length = 0;
  #ropeSeqLen = -1;
  /** The call running on the engine (calls do not interleave: they share its buffers). */
  #busy: string | undefined;
  #destroyed = false;
  /** The options it was made with, and the checkpoint it was loaded from (for {@link rebind}). */
  readonly #options: LlamaEngineOptions;
  #source: TensorStore | undefined;

  private constructor(gpu: ResidentDevice, config: LlamaConfig, format: WeightFormat, options: LlamaEngineOptions) {
    requireDevice("LlamaEngine", gpu);
    requireWeightFormat("LlamaEngine", format);
    this.config = config;
    this.format = format;
    this.#options = { ...options, onProgress: undefined };
    this.#gpu = gpu;
    this.#device = gpu.device;
    const where = "LlamaEngine";
    const maxSeq = options.maxSeq ?? 512;
    if (!Number.isSafeInteger(maxSeq) || maxSeq < 1) {
      throw new Error(`${where}: maxSeq must be an integer >= 1, got ${maxSeq}`);
    }
    const { headDim: D, numAttentionHeads: heads, numKeyValueHeads: kv } = config;
    if (D % 4 !== 0 || D > MAX_HEAD_DIM) {
      throw new Error(`${where}: headDim must be a multiple of 4 and at most ${MAX_HEAD_DIM}, got ${D}`);
    }
    if (heads % kv !== 0) throw new Error(`${where}: heads (${heads}) must be a multiple of kvHeads (${kv})`);
    if (config.hiddenSize % 4 !== 0 || config.intermediateSize % 4 !== 0) {
      const sizes = `${config.hiddenSize} and ${config.intermediateSize}`;
      throw new Error(`${where}: hiddenSize and intermediateSize must be multiples of 4 (vec4 reads), got ${sizes}`);
    }
    if (config.hiddenSize > RESIDUAL_MAX_COLS) {
      throw new Error(
        `${where}: hiddenSize must be at most ${RESIDUAL_MAX_COLS} (the prefill's RMSNorm holds a row in registers), got ${config.hiddenSize}`,
      );
    }
    this.maxSeq = maxSeq;
    const activations = checkActivations(options.prefillActivations, format, where, "prefillActivations");
    this.prefillActivations = activations;
    const limit = this.#bindingLimit;
    const cacheBytes = kv * maxSeq * D * 4;
    if (cacheBytes > limit) {
      throw new Error(
        `${where}: a layer's KV cache for maxSeq ${maxSeq} is ${cacheBytes} bytes, over maxStorageBufferBindingSize ${limit}`,
      );
    }
    const widest = Math.max(
      (heads + 2 * kv) * D,
      2 * config.intermediateSize,
      config.hiddenSize,
      heads * D,
      this.#widestBlock(config),
    ) * 4;
    const prefillChunk = options.prefillChunk ?? 512;
    if (!Number.isSafeInteger(prefillChunk) || prefillChunk < 1) {
      throw new Error(`${where}: prefillChunk must be an integer >= 1, got ${prefillChunk}`);
    }
    const wanted = Math.min(prefillChunk, maxSeq, 4096);
    this.chunkRows = Math.max(1, Math.min(wanted, Math.floor(limit / widest)));
    // forward() (tests) reads logits back 8 rows at a time: 3.3 MB at a 102,400 vocab (a 512-row
    // buffer would be 210 MB, resident for nothing: generation needs one row).
    this.logitRows = Math.max(1, Math.min(this.chunkRows, 8, Math.floor(limit / (4 * config.vocabSize))));
    if (4 * config.vocabSize > limit) {
      throw new Error(`${where}: one row of logits (${4 * config.vocabSize} bytes) is over the binding limit ${limit}`);
    }
    const splits = options.attentionSplits ?? Math.min(32, Math.ceil(maxSeq / 48));
    if (!Number.isSafeInteger(splits) || splits < 1 || splits > MAX_ATTENTION_SPLITS) {
      throw new Error(`${where}: attentionSplits must be an integer in [1, ${MAX_ATTENTION_SPLITS}], got ${splits}`);
    }
    this.attentionSplits = splits;
    const chunk = options.attentionChunk ?? 1024;
    if (!Number.isSafeInteger(chunk) || chunk < 1 || chunk > 1024) {
      throw new Error(`${where}: attentionChunk must be an integer in [1, 1024], got ${chunk}`);
    }
    this.#attentionChunk = chunk;
    // Everything the load will allocate, from the config and the format, before any of it is.
    const sizes = {
      maxSeq,
      chunkRows: this.chunkRows,
      logitRows: this.logitRows,
      attentionSplits: splits,
      prefillActivations: activations,
    };
    this.estimate = estimateResidentBytes(config, format, { ...sizes, bindingLimit: limit });
    checkResidentBudget(where, this.estimate, options.maxResidentBytes);
  }

  get #bindingLimit(): number {
    return bindingBytes(this.#gpu.limits);
  }

  /** Rows of the largest row block any matrix can have (a split product's scratch holds that many columns). */
  #widestBlock(config: LlamaConfig): number {
    const { hiddenSize: H, headDim: D, numAttentionHeads: heads, numKeyValueHeads: kv, intermediateSize: F } = config;
    const tallest = Math.max(config.vocabSize, (heads + 2 * kv) * D, 2 * F, H);
    return blockRows(this.format, Math.min(H, heads * D, F), tallest, this.#bindingLimit);
  }

  /**
   * Loads a checkpoint onto the GPU, tensor by tensor (only one tensor is held on the host at a time,
   * plus a layer's Q/K/V or gate/up until they are fused).
   *
   * @param gpu the device
   * @param store the checkpoint: a Hugging Face one (quantised on load to `options.format`) or a converted one
   * @param config the model
   * @param options format, cache size, chunking, progress
   * @returns the engine, its cache empty
   * @throws Error (before any GPU work) for a missing or misshapen tensor, an unknown format, a size over a
   *   device limit, or an estimate over `maxResidentBytes` (naming the bytes of the weights, KV cache and
   *   activations)
   *
   * @example
   * ```ts
   * import { acquireDevice } from "@xpu/ops/harness";
   * import { LlamaEngine, parseLlamaConfig } from "@xpu/ops/models/llama";
   * import { openCheckpointDir } from "@xpu/ops/llm/file";
   * const dir = "models/llama/fixtures/tiny-gqa/f32";
   * const config = parseLlamaConfig(await Deno.readTextFile(`${dir}/config.json`));
   * const { store } = await openCheckpointDir(dir);
   * const gpu = await acquireDevice();
   * const engine = await LlamaEngine.load(gpu, store, config, { format: "q8", maxSeq: 64 });
   * for await (const id of engine.generate([5, 6, 7], { maxTokens: 8 })) console.log(id);
   * engine.destroy();
   * gpu.destroy();
   * ```
   */
  static load(
    gpu: ResidentDevice,
    store: TensorStore,
    config: LlamaConfig,
    options?: LlamaEngineOptions,
  ): Promise<LlamaEngine> {
    if (store === null || typeof store !== "object" || !Array.isArray(store.tensors)) {
      throw new Error(
        `LlamaEngine.load: store must be a TensorStore (SafetensorsFile.open, openCheckpointDir), got ${String(store)}`,
      );
    }
    if (config === null || typeof config !== "object" || !Number.isInteger(config.numHiddenLayers)) {
      throw new Error(`LlamaEngine.load: config must be a LlamaConfig (parseLlamaConfig), got ${String(config)}`);
    }
    checkKeys("LlamaEngine.load", "option", options, LOAD_OPTION_KEYS);
    options ??= {};
    if (options.format !== undefined) requireWeightFormat("LlamaEngine.load", options.format);
    // A converted checkpoint's own format when none is asked for (another one is refused here).
    const format = planLoad(store, config, options.format).format;
    // q8 and q4g128 are quantized on the GPU (ops/quantize's `packed` and `packed_q4` kernels, the
    // converter's bytes exactly), the matrices read as f32.
    const weights = loadWeights(store, config, {
      format,
      onProgress: options.onProgress,
      deferQuantization: ["q8", "q4g128"],
    });
    return LlamaEngine.fromWeights(gpu, config, weights, { ...options, format }).then((engine) => {
      engine.#source = store;
      return engine;
    });
  }

  /**
   * The same model on another device, loaded again from host-side weights: what to do after a
   * {@link DeviceLostError} (a GPU reset, a browser that reclaimed the device). The new engine has
   * this one's config and options and an empty cache; this one is destroyed.
   *
   * @param gpu the new device (e.g. from `acquireDevice()` after the loss)
   * @param options `store`: the checkpoint to load from, default the one this engine was loaded from
   *   (which must still be open: a closed file is refused by its reader); `onProgress` as {@link load}'s
   * @returns the new engine
   * @throws Error when no store is given and this engine was built by `fromWeights`, or as {@link load}
   *
   * @example
   * ```ts
   * import { acquireDevice } from "@xpu/ops/harness";
   * import { LlamaEngine, parseLlamaConfig } from "@xpu/ops/models/llama";
   * import { openCheckpointDir } from "@xpu/ops/llm/file";
   * const dir = "models/llama/fixtures/tiny-gqa/f32";
   * const config = parseLlamaConfig(await Deno.readTextFile(`${dir}/config.json`));
   * const { store, close } = await openCheckpointDir(dir);
   * let gpu = await acquireDevice();
   * let engine = await LlamaEngine.load(gpu, store, config, { format: "q8", maxSeq: 32 });
   * gpu.destroy(); // the device is gone: every call now throws DeviceLostError
   * gpu = await acquireDevice();
   * engine = await engine.rebind(gpu); // the same weights, from the same store
   * for await (const id of engine.generate([5, 6, 7], { maxTokens: 4 })) console.log(id);
   * close();
   * engine.destroy();
   * gpu.destroy();
   * ```
   */
  async rebind(
    gpu: ResidentDevice,
    options: { store?: TensorStore; onProgress?: LoadProgress } = {},
  ): Promise<LlamaEngine> {
    const store = options.store ?? this.#source;
    if (store === undefined) {
      throw new Error(
        "LlamaEngine.rebind: this engine was built from weights, not a store: pass { store } to load from",
      );
    }
    const engine = await LlamaEngine.load(gpu, store, this.config, {
      ...this.#options,
      format: this.format,
      onProgress: options.onProgress,
    });
    this.destroy();
    return engine;
  }

  /**
   * Builds an engine from weights already in the stored form (what `loadWeights` yields, in its
   * order), e.g. generated ones for a benchmark.
   *
   * @param gpu the device
   * @param config the model
   * @param weights every tensor of `llamaWeightSpecs(config)`, transformed to `options.format`
   * @param options as {@link load}
   * @returns the engine
   */
  static async fromWeights(
    gpu: ResidentDevice,
    config: LlamaConfig,
    weights: AsyncIterable<LoadedWeight> | Iterable<LoadedWeight>,
    options?: LlamaEngineOptions,
  ): Promise<LlamaEngine> {
    options ??= {};
    const engine = new LlamaEngine(gpu, config, options.format ?? "f32", options);
    try {
      await engine.#upload(weights);
      engine.#allocateActivations();
      for (const check of engine.#allocations.splice(0)) await check;
      return engine;
    } catch (e) {
      engine.destroy();
      throw e;
    }
  }

  /**
   * A buffer of the engine's, created in error scopes whose outcome `fromWeights` examines once
   * everything is allocated (so an allocation the device refuses fails the load, by name).
   */
  #buffer(bytes: number, label: string): GPUBuffer {
    const size = Math.max(16, Math.ceil(bytes / 16) * 16);
    let buffer: GPUBuffer | undefined;
    const check = this.#gpu.withErrorScopes(() => `LlamaEngine: allocating ${label} (${size} bytes)`, () => {
      buffer = this.#device.createBuffer({ label, size, usage: STORAGE });
    });
    check.catch(() => {}); // examined by fromWeights
    this.#allocations.push(check);
    this.#owned.push(buffer!);
    return buffer!;
  }

  async #upload(weights: AsyncIterable<LoadedWeight> | Iterable<LoadedWeight>): Promise<void> {
    const c = this.config;
    const resident = await uploadWeights(
      this.#device,
      c,
      this.format,
      this.#bindingLimit,
      (bytes, label) => this.#buffer(bytes, label),
      weights,
      (values, rows, K, weight, scales) =>
        quantizeRowsGpu(this.#gpu, this.format as Exclude<WeightFormat, "f32">, values, rows, K, weight, scales),
    );
    this.#embedding = resident.embedding;
    this.#head = resident.head;
    this.#finalNorm = resident.finalNorm;
    this.#weights = resident;
    const cacheBytes = c.numKeyValueHeads * this.maxSeq * c.headDim * 4;
    for (const [i, l] of resident.layers.entries()) {
      this.#layers.push({
        ...l,
        keys: this.#tensor("f32", cacheBytes / 4, `layer ${i} keys`),
        values: this.#tensor("f32", cacheBytes / 4, `layer ${i} values`),
      });
    }
  }

  /**
   * The activation buffers. A prefill layer's row-sized intermediates take turns in two buffers
   * (each dispatch reads one and writes the other, never one buffer both ways): `wide` holds QKV's
   * output until RoPE has read it, then attention's output until O has read it, then gate/up's
   * output, a piece of its columns at a time (`#ffnPieces`); `narrow` holds the rotated queries,
   * then SiLU·mul's output, filled piece by piece. A decode step keeps QKV's output in `wide` and
   * attention's and SwiGLU's in `narrow`. With `x` (the residual stream), `xn` (its norm) and `o`
   * (a product's output before its residual add) that is five buffers of rows, instead of eight
   * of which one was twice the FFN's width.
   */
  #allocateActivations(): void {
    const c = this.config;
    const R = this.chunkRows;
    const qDim = c.numAttentionHeads * c.headDim;
    const qkvDim = qDim + 2 * c.numKeyValueHeads * c.headDim;
    const F = c.intermediateSize;
    // f32's gate/up product writes all 2·F columns (placed from scratch block by block).
    const ffnPiece = this.format === "f32"
      ? 2 * F
      : Math.max(...this.#layers.flatMap((l) => this.#ffnPieces(l.gateUp).map((piece) => piece.rows)));
    const sizes: Record<string, number> = {
      ids: Math.max(R, 4),
      x: R * c.hiddenSize,
      xn: R * c.hiddenSize,
      xlast: c.hiddenSize,
      wide: R * Math.max(qkvDim, qDim, ffnPiece),
      narrow: R * Math.max(c.hiddenSize, qDim, F),
      o: R * c.hiddenSize,
      logits: this.logitRows * c.vocabSize,
      scratch: this.#scratchElements(),
      xt: this.format === "f32" ? R * Math.max(c.hiddenSize, qDim, c.intermediateSize) : 4,
      rope: this.maxSeq * c.headDim,
      state: 4,
      tokens: this.maxSeq,
      partial: c.numAttentionHeads * this.attentionSplits * (c.headDim + 2),
      counters: c.numAttentionHeads,
      argmaxPartial: argmaxTokenPlan(this.#gpu, { vocab: c.vocabSize, steps: this.maxSeq }).bindings[4].length,
      argmaxCounter: 2,
      probs: c.vocabSize,
      samplerOptions: 8,
      mask: Math.ceil(c.vocabSize / 32),
    };
    if (this.prefillActivations === "int8") {
      // A product's input quantised per row, four codes a word (the widest input's columns; the
      // head's rows in forward, logitRows, are at most chunkRows), and each row's scale.
      sizes.xq = R * Math.ceil(Math.max(c.hiddenSize, qDim, F) / 4);
      sizes.xqScales = R;
    }
    const words = new Set([
      "xq",
      "ids",
      "state",
      "tokens",
      "partial",
      "counters",
      "argmaxPartial",
      "argmaxCounter",
      "samplerOptions",
      "mask",
    ]);
    for (const [name, n] of Object.entries(sizes)) {
      this.#act[name] = this.#tensor(words.has(name) ? "u32" : "f32", n, name);
    }
  }

  /** A tensor of the engine's ({@link #buffer}). */
  #tensor(dtype: TensorDtype, length: number, label: string): GpuTensor {
    return { buffer: this.#buffer(4 * length, label), dtype, length };
  }

  /**
   * The pieces prefill's gate/up product runs in, each followed by SiLU·mul into its columns of
   * `narrow`, so `wide` holds a piece's columns rather than all 2·F: q8 and q4g128 cut each row
   * block in two at a multiple of 64 rows (gate/up pairs kept whole, and the second half's
   * bindings on the device's offset alignment). f32's prefill product, transposed through `scratch`
   * block by block, is not cut: it writes all 2·F columns to `wide`.
   */
  #ffnPieces(m: Matrix): Piece[] {
    const pieces: Piece[] = [];
    const align = this.#device.limits.minStorageBufferOffsetAlignment;
    const bytes = rowBytes(this.format, m.K);
    for (const b of m.blocks) {
      const half = Math.floor(b.rows / 128) * 64;
      const aligned = (half * bytes.weight) % align === 0 && (half * bytes.scales) % align === 0;
      if (this.format === "f32" || half === 0 || !aligned) {
        pieces.push(b);
        continue;
      }
      const view = (t: GpuTensor, rowBytes: number, from: number, to: number) =>
        tensorView(t, (from * rowBytes) / 4, ((to - from) * rowBytes) / 4);
      for (const [from, to] of [[0, half], [half, b.rows]]) {
        pieces.push({
          row0: b.row0 + from,
          rows: to - from,
          weight: view(b.weight, bytes.weight, from, to),
          scales: view(b.scales!, bytes.scales, from, to),
        });
      }
    }
    return pieces;
  }

  /**
   * Elements of the scratch a product's block output goes through: every block in f32 (its prefill
   * product is transposed there), else the blocks of split matrices; times the rows a product of it
   * runs on (a prefill chunk for the layers, a forward chunk for the head).
   */
  #scratchElements(): number {
    let elements = 0;
    // Quantised gate/up pieces go to `wide`, never through scratch.
    const layers = this.#layers.flatMap((l) =>
      this.format === "f32" ? [l.qkv, l.o, l.gateUp, l.down] : [l.qkv, l.o, l.down]
    );
    for (const [rows, matrices] of [[this.chunkRows, layers], [this.logitRows, [this.#head]]] as const) {
      for (const m of matrices) {
        if (m.blocks.length > 1 || this.format === "f32") {
          elements = Math.max(elements, rows * Math.max(...m.blocks.map((b) => b.rows)));
        }
      }
    }
    return elements;
  }

  /** Tokens in the KV cache. */
  get length(): number {
    return this.#length;
  }

  /** Empties the KV cache (its contents are overwritten as positions are used again). */
  reset(): void {
    this.#length = 0;
  }

  /** Dispatches one decode step of {@link generate} encodes (a compute pass of them). */
  get dispatchesPerToken(): number {
    return this.#program(1, "argmax").program.steps.length;
  }

  // ---------------------------------------------------------------------------------------------
  // Building programs

  /** Binds a plan to its tensors (checked against the device's limits now) and adds it to `list`. */
  #bind(list: Step[], label: string, plan: KernelPlan, tensors: GpuTensor[]): void {
    list.push({ label, bound: this.#gpu.bind(plan, tensors) });
  }

  #product(
    list: Step[],
    where: string,
    kernel: ProductKernel,
    bufs: Partial<Record<ProductSlot, GpuTensor>>,
  ): void {
    const { plan, slots } = kernel;
    const tensors = slots.map((s) => {
      const t = bufs[s];
      if (!t) throw new Error(`LlamaEngine: ${plan.op} binds ${s}, which the engine did not give it`);
      return t;
    });
    this.#bind(list, `${plan.op}/${plan.kernel.variant} ${where}`, plan, tensors);
  }

  /** Whether a product of `rows` rows multiplies int8 activations (prefill with `prefillActivations: "int8"`). */
  #int8(rows: number): boolean {
    return rows > 1 && this.prefillActivations === "int8";
  }

  /**
   * Quantises `input` (`[rows, K]`) per row into `xq` and `xqScales`, the int8 input of the
   * products after it that read it.
   */
  #quantizeInput(list: Step[], input: GpuTensor, rows: number, K: number, reader: string): void {
    const a = this.#act;
    const plan = quantizePackedPlan(this.#gpu, { rows, cols: K });
    this.#bind(list, `quantize/${plan.kernel.variant} input of ${reader}`, plan, [input, a.xq, a.xqScales]);
  }

  /**
   * A prefill product of a quantised weight (or one piece of it): the f32 GEMM on `input`, or, with
   * int8 activations, the dp4a GEMM on `xq` (which `#quantizeInput` filled from `input`).
   */
  #gemm(rows: number, N: number, K: number, variant?: string): ProductKernel {
    const format = this.format as "q8" | "q4g128";
    return this.#int8(rows)
      ? gemmDp4a(this.#gpu, format, rows, N, K, variant)
      : gemmQuantized(this.#gpu, format, rows, N, K, variant);
  }

  /** `out[rows, N] = in[rows, K] W^T`, block by block. */
  #linear(list: Step[], m: Matrix, input: GpuTensor, output: GpuTensor, rows: number): void {
    const a = this.#act;
    const transposed = rows > 1 && this.format === "f32";
    const int8 = this.#int8(rows);
    if (int8) this.#quantizeInput(list, input, rows, m.K, m.name);
    if (transposed) {
      this.#bind(list, `transpose ${m.name}`, transposePlan(this.#gpu, { rows, cols: m.K }), [input, a.xt]);
    }
    for (const b of m.blocks) {
      const where = `${m.name}[${b.row0}:${b.row0 + b.rows}]`;
      if (transposed) {
        const kernel = gemmF32Transposed(this.#gpu, rows, b.rows, m.K);
        this.#product(list, where, kernel, { weight: b.weight, scales: b.weight, input: a.xt, output: a.scratch });
        const shape = { rows, cols: b.rows, outCols: m.N, col0: b.row0, transposed: true };
        this.#bind(list, `place_transposed ${where}`, placeColumnsPlan(this.#gpu, shape), [a.scratch, output]);
        continue;
      }
      const target = m.blocks.length === 1 ? output : a.scratch;
      const kernel = rows === 1 ? gemv(this.#gpu, this.format, b.rows, m.K) : this.#gemm(rows, b.rows, m.K);
      const bufs = int8 ? { input: a.xq, inputScales: a.xqScales } : { input };
      this.#product(list, where, kernel, { weight: b.weight, scales: b.scales!, ...bufs, output: target });
      if (m.blocks.length > 1) {
        const shape = { rows, cols: b.rows, outCols: m.N, col0: b.row0 };
        this.#bind(list, `place ${where}`, placeColumnsPlan(this.#gpu, shape), [target, output]);
      }
    }
  }

  /** Prefill's gate/up product and SiLU·mul: `narrow = silu(gate) * up` of `xn`, piece by piece through `wide`. */
  #feedForward(list: Step[], m: Matrix, rows: number): void {
    const a = this.#act;
    const F = this.config.intermediateSize;
    const silu = (pairs: number, col0: number) => {
      const plan = swigluPairsPlan(this.#gpu, { rows, pairs, outCols: F, col0 });
      this.#bind(list, "swiglu_pairs", plan, [a.wide, a.narrow]);
    };
    if (this.format === "f32") {
      this.#linear(list, m, a.xn, a.wide, rows);
      silu(F, 0);
      return;
    }
    // Each piece runs the kernel the whole product's size picks (ops/matmul picks a smaller tile for
    // a piece's narrower output, which was slower here: 24 layers' gate/up at 512 rows, q8, on the
    // H200, took 30.2 ms in pieces on that tile (nvidia-h200-log/30-engine-ab-staged.txt) against
    // 21.5 ms in pieces on the whole product's (30-engine-bench.txt; 16.8 unsplit, 26-llm-fused-ab.txt).
    // With int8 activations, `xn` is quantised once and every piece reads it.
    const int8 = this.#int8(rows);
    if (int8) this.#quantizeInput(list, a.xn, rows, m.K, m.name);
    const bufs = int8 ? { input: a.xq, inputScales: a.xqScales } : { input: a.xn };
    const variant = this.#gemm(rows, m.N, m.K).plan.kernel.variant;
    for (const piece of this.#ffnPieces(m)) {
      const kernel = this.#gemm(rows, piece.rows, m.K, variant);
      const where = `${m.name}[${piece.row0}:${piece.row0 + piece.rows}]`;
      this.#product(list, where, kernel, { weight: piece.weight, scales: piece.scales!, ...bufs, output: a.wide });
      silu(piece.rows / 2, piece.row0 / 2);
    }
  }

  #norm(list: Step[], rows: number, add: boolean, weight: GpuTensor, out: GpuTensor, row0 = 0): void {
    const a = this.#act;
    const shape = { rows, cols: this.config.hiddenSize, row0, add, eps: this.config.rmsNormEps };
    this.#bind(list, "rmsnorm/residual", rmsnormResidualPlan(this.#gpu, shape), [a.x, a.o, weight, out]);
  }

  /**
   * A decode step's weight product with its neighbours folded in (ops/fused_gemv), block by block:
   * `output = W · input`, `input` normalised by `norm` first, and the result stored, added to
   * `output` or combined by SwiGLU. Every block takes the layout of the whole matrix's rows.
   */
  #fused(
    list: Step[],
    m: Matrix,
    input: GpuTensor,
    output: GpuTensor,
    mode: FusedGemvInput,
    result: FusedGemvOutput,
    norm?: GpuTensor,
  ): void {
    for (const b of m.blocks) {
      const shape = {
        format: this.format,
        N: b.rows,
        K: m.K,
        input: mode,
        output: result,
        out0: result === "swiglu" ? b.row0 / 2 : b.row0,
        outLength: output.length,
        eps: this.config.rmsNormEps,
        layoutRows: m.N,
      };
      const plan = fusedGemvPlan(this.#gpu, shape);
      const where = `fused_gemv/${plan.kernel.variant} ${mode}>${result} ${m.name}[${b.row0}:${b.row0 + b.rows}]`;
      // Without the norm its weight is not read: the input is bound in its place.
      this.#bind(list, where, plan, [b.weight, ...(b.scales ? [b.scales] : []), input, norm ?? input, output]);
    }
  }

  /** The dispatches of a call of `rows` rows ending in `output`, built once and cached. */
  #program(rows: number, output: Output, masked = false): Built {
    const key = `${rows}/${output}/${masked}`;
    const cached = this.#programs.get(key);
    if (cached) {
      this.#programs.delete(key); // now the most recently used
      this.#programs.set(key, cached);
      return cached;
    }
    const c = this.config;
    const a = this.#act;
    const list: Step[] = [];
    // The embedding gather, block by block; the ids (u32, written by the sampler) read as gather's i32 index.
    const ids: GpuTensor = { buffer: a.ids.buffer, dtype: "i32", length: a.ids.length };
    const blocks = this.#embedding.blocks;
    const shape = { rows: c.vocabSize, cols: c.hiddenSize, indexLength: rows, blockRows: blocks[0].rows };
    const { sequence } = this.format === "f32"
      ? gatherBlocksPlan(this.#gpu, shape)
      : gatherQuantizedBlocksPlan(this.#gpu, { ...shape, format: this.format });
    for (const [i, { plan }] of sequence.steps.entries()) {
      const b = blocks[i];
      this.#bind(list, `gather/${plan.kernel.variant}`, plan, [b.weight, ...(b.scales ? [b.scales] : []), ids, a.x]);
    }
    const { headDim: D, numAttentionHeads: heads, numKeyValueHeads: kv } = c;
    const cache = { H: heads, kvHeads: kv, D, maxSeq: this.maxSeq, L: rows, chunk: this.#attentionChunk };
    const decodeAttention = rows === 1
      ? gqaCacheDecodePlan(this.#gpu, { ...cache, splits: this.attentionSplits })
      : undefined;
    const prefillAttention = rows > 1 ? gqaCachePrefillPlan(this.#gpu, cache) : undefined;
    for (const [i, l] of this.#layers.entries()) {
      if (rows === 1) {
        // x is the residual stream: O and down add into it, QKV and gate/up normalise it as they read it.
        this.#fused(list, l.qkv, a.x, a.wide, "norm", "store", l.inputNorm);
        const storage = [a.wide, a.rope, l.keys, l.values, a.narrow, a.state, a.partial, a.counters];
        this.#bind(list, "gqa/cache_decode", decodeAttention!, storage);
        this.#fused(list, l.o, a.narrow, a.x, "plain", "add");
        this.#fused(list, l.gateUp, a.x, a.narrow, "norm", "swiglu", l.postNorm);
        this.#fused(list, l.down, a.narrow, a.x, "plain", "add");
        continue;
      }
      // Prefill: wide and narrow take turns (#allocateActivations).
      this.#norm(list, rows, i > 0, l.inputNorm, a.xn);
      this.#linear(list, l.qkv, a.xn, a.wide, rows);
      const { write, attend } = prefillAttention!;
      this.#bind(list, "gqa/cache_write", write, [a.wide, a.rope, a.narrow, l.keys, l.values, a.state]);
      const attention = [a.narrow, l.keys, l.values, a.wide, a.state, a.partial, a.counters];
      this.#bind(list, "gqa/cache_prefill", attend, attention);
      this.#linear(list, l.o, a.wide, a.o, rows);
      this.#norm(list, rows, true, l.postNorm, a.xn);
      this.#feedForward(list, l.gateUp, rows);
      this.#linear(list, l.down, a.narrow, a.o, rows);
    }
    // Prefill's last down product is still in o; a decode step's is already in x.
    const add = rows > 1;
    if (output === "logits") {
      this.#norm(list, rows, add, this.#finalNorm, a.xn);
      this.#linear(list, this.#head, a.xn, a.logits, rows);
    } else if (output === "argmax" || output === "draw") {
      this.#norm(list, 1, add, this.#finalNorm, a.xlast, rows - 1);
      this.#linear(list, this.#head, a.xlast, a.logits, 1);
      const shape = { vocab: c.vocabSize, steps: this.maxSeq, advance: rows };
      if (masked) {
        this.#bind(list, "sample/mask", maskLogitsPlan(this.#gpu, { vocab: c.vocabSize }), [a.logits, a.mask]);
      }
      if (output === "argmax") {
        const storage = [a.logits, a.ids, a.tokens, a.state, a.argmaxPartial, a.argmaxCounter];
        this.#bind(list, "sample/argmax", argmaxTokenPlan(this.#gpu, shape), storage);
      } else {
        const storage = [a.logits, a.probs, a.ids, a.tokens, a.state, a.samplerOptions];
        this.#bind(list, "sample/sample", sampleTokenPlan(this.#gpu, shape), storage);
      }
    }
    const built = {
      program: this.#gpu.program(`LlamaEngine ${key}`, list.map((d) => d.bound)),
      labels: list.map((d) => d.label),
    };
    this.#programs.set(key, built);
    for (const [old, { program }] of this.#programs) {
      if (this.#programs.size <= PROGRAMS_KEPT) break;
      program.destroy();
      this.#programs.delete(old);
    }
    return built;
  }

  // ---------------------------------------------------------------------------------------------
  // Running

  #checkIds(ids: readonly number[], what: string): void {
    const V = this.config.vocabSize;
    for (const [i, id] of ids.entries()) {
      if (!Number.isInteger(id) || id < 0 || id >= V) {
        throw new Error(`LlamaEngine.${what}: ids[${i}] = ${id} is not a token id in [0, ${V})`);
      }
    }
  }

  /** Writes the RoPE table rows of positions [from, to) for a call whose largest position is `seqLen - 1`. */
  #writeRope(from: number, to: number, seqLen: number): void {
    const c = this.config;
    const dynamic = c.ropeScaling.ropeType === "dynamic";
    if (!dynamic && this.#ropeSeqLen >= 0) return; // static: written once, whole
    if (!dynamic) [from, to] = [0, this.maxSeq];
    const freqs = ropeFrequencies(c, seqLen);
    const table = new Float32Array((to - from) * c.headDim);
    for (let p = from; p < to; p++) table.set(ropeCosSin(freqs, p), (p - from) * c.headDim);
    this.#device.queue.writeBuffer(this.#act.rope.buffer, from * c.headDim * 4, table);
    this.#ropeSeqLen = seqLen;
  }

  /** Uploads the constraint's set after `generated` as the mask's bitset (nothing without a constraint). */
  #writeMask(constraint: Constraint | undefined, generated: readonly number[]): void {
    if (!constraint) return;
    const where = "LlamaEngine.generate";
    const V = this.config.vocabSize;
    const allowed = constraint.nextAllowed(generated);
    const words = new Uint32Array(Math.ceil(V / 32));
    if (allowed === null) words.fill(0xffffffff);
    else {
      if (allowed.size === 0) {
        throw new Error(`${where}: the constraint allows no token after ${generated.length} generated tokens`);
      }
      for (const id of allowed) {
        if (!Number.isInteger(id) || id < 0 || id >= V) {
          throw new Error(`${where}: the constraint allows id ${id}, outside [0, ${V})`);
        }
        words[id >>> 5] |= 1 << (id & 31);
      }
    }
    this.#device.queue.writeBuffer(this.#act.mask.buffer, 0, words);
  }

  #writeState(pos0: number, step = 0): void {
    this.#device.queue.writeBuffer(this.#act.state.buffer, 0, new Uint32Array([pos0, step, 0, 0]));
  }

  /**
   * Runs tokens after those in the cache and returns every row's logits (for tests; generation
   * uses {@link generate}, which reads back only the chosen ids).
   *
   * @param ids token ids
   * @returns logits `[ids.length, vocab]`
   * @throws Error naming an id outside the vocabulary, or positions past maxSeq, before any GPU work
   */
  async forward(ids: readonly number[]): Promise<Float32Array> {
    this.#enter("forward");
    try {
      return await this.#forward(ids);
    } finally {
      this.#leave();
    }
  }

  async #forward(ids: readonly number[]): Promise<Float32Array> {
    this.#checkIds(ids, "forward");
    if (this.#length + ids.length > this.maxSeq) {
      throw new Error(
        `LlamaEngine.forward: ${this.#length} cached + ${ids.length} new tokens exceed maxSeq ${this.maxSeq}`,
      );
    }
    const V = this.config.vocabSize;
    const out = new Float32Array(ids.length * V);
    const staging = this.#device.createBuffer({
      size: this.logitRows * V * 4,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    // Every chunk of the call rotates with the frequencies of the whole call (dynamic RoPE depends
    // on the call's length, as in one transformers forward over all the ids).
    const seqLen = this.#length + ids.length;
    try {
      for (let start = 0; start < ids.length; start += this.logitRows) {
        const chunk = ids.slice(start, start + this.logitRows);
        const pos0 = this.#length;
        await this.#gpu.withErrorScopes(() => "LlamaEngine.forward", () => {
          this.#writeRope(pos0, pos0 + chunk.length, seqLen);
          this.#writeState(pos0);
          this.#device.queue.writeBuffer(this.#act.ids.buffer, 0, new Uint32Array(chunk));
          const encoder = this.#device.createCommandEncoder();
          this.#program(chunk.length, "logits").program.encode(encoder);
          encoder.copyBufferToBuffer(this.#act.logits.buffer, 0, staging, 0, chunk.length * V * 4);
          this.#device.queue.submit([encoder.finish()]);
        });
        await staging.mapAsync(GPUMapMode.READ);
        out.set(new Float32Array(staging.getMappedRange(0, chunk.length * V * 4)), start * V);
        staging.unmap();
        this.#length += chunk.length;
      }
    } finally {
      staging.destroy();
    }
    return out;
  }

  /**
   * Generates tokens after a prompt, on the GPU: the cache is reset, the prompt prefilled in
   * chunks, then each step's choice (greedy, or the seeded draw) feeds the next step without the
   * host in between. A seeded run gives the ids `sampleNext` gives on the reference's logits with
   * the same options (up to f32 rounding at a boundary: ops/sample).
   * Streaming: ids are yielded as their readbacks land, `readEvery` steps at a time (the first
   * token alone), while up to `inFlight` readbacks' steps are queued on the GPU. Generation
   * stops after `maxTokens`, after an end-of-sequence id (yielded, nothing after it), or when
   * `signal` aborts. Afterwards the cache is considered empty. With a `constraint`, each step
   * waits for the previous id (one readback per token), and a constraint that allows no token
   * ends generation with an error after the ids before it.
   *
   * @param promptIds the prompt (at least one id)
   * @param options token budget, sampler, constraint, abort signal
   * @returns an async iterator of token ids
   * @throws Error before any GPU work for an id outside the vocabulary, an empty prompt, a prompt and
   *   budget over maxSeq, or a sampler option out of range
   *
   * @example
   * ```ts
   * import { acquireDevice } from "@xpu/ops/harness";
   * import { LlamaEngine, parseLlamaConfig } from "@xpu/ops/models/llama";
   * import { openCheckpointDir } from "@xpu/ops/llm/file";
   * const dir = "models/llama/fixtures/tiny-gqa/f32";
   * const config = parseLlamaConfig(await Deno.readTextFile(`${dir}/config.json`));
   * const { store, close } = await openCheckpointDir(dir);
   * const gpu = await acquireDevice();
   * const engine = await LlamaEngine.load(gpu, store, config, { maxSeq: 32 });
   * close();
   * const sampler = { mode: "sample", temperature: 0.8, topK: 40, topP: 0.95, seed: 42 } as const;
   * const ids: number[] = [];
   * for await (const id of engine.generate([5, 6, 7], { maxTokens: 8, sampler })) ids.push(id);
   * // The same seed gives the same ids on every run.
   * engine.destroy();
   * gpu.destroy();
   * ```
   */
  async *generate(promptIds: readonly number[], options: GenerateOptions): AsyncGenerator<number> {
    const where = "LlamaEngine.generate";
    if (!Array.isArray(promptIds)) {
      throw new Error(`${where}: promptIds must be an array of token ids, got ${String(promptIds)}`);
    }
    if (options === null || typeof options !== "object") {
      throw new Error(`${where}: options must be an object with maxTokens, got ${String(options)}`);
    }
    checkKeys(where, "option", options, GENERATE_OPTION_KEYS);
    const { maxTokens, signal } = options;
    const sampler = options.sampler ?? { mode: "greedy" };
    validateSampler(where, sampler);
    const chooser: Output = sampler.mode === "greedy" ? "argmax" : "draw";
    if (promptIds.length < 1) throw new Error(`${where}: the prompt must hold at least one token`);
    if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) {
      throw new Error(`${where}: maxTokens must be an integer >= 1, got ${maxTokens}`);
    }
    this.#checkIds(promptIds, "generate");
    if (promptIds.length + maxTokens - 1 > this.maxSeq) {
      throw new Error(
        `${where}: a prompt of ${promptIds.length} and ${maxTokens} tokens need ${
          promptIds.length + maxTokens - 1
        } positions, over maxSeq ${this.maxSeq}`,
      );
    }
    const constraint = options.constraint;
    // With a constraint, each step's mask needs the previous id: one readback per token.
    const grouping = tokenRingGrouping(where, options, Boolean(constraint));
    const stats = options.stats;
    const eos = new Set(this.config.eosTokenIds);
    const device = this.#device;
    /** The readbacks of the ids the sampler writes, made once the call is admitted (a refused call makes none). */
    let ring: TokenRing | undefined;
    const P = promptIds.length;
    // The steps submitted between two readbacks (and each prefill chunk) run in error scopes of
    // their own; their outcomes are examined before the next readback, so a rejected step (a kernel
    // the browser would not compile, a validation error) fails the iterator, without awaiting the
    // scopes between steps.
    const checks = new ErrorScopeBatch(this.#gpu, where);
    this.#enter("generate");
    try {
      this.#length = 0;
      ring = new TokenRing(device, this.#act.tokens, maxTokens, grouping);
      if (sampler.mode === "sample") {
        device.queue.writeBuffer(this.#act.samplerOptions.buffer, 0, packSampleOptions(sampler));
      }
      // Prefill: chunks of the prompt; the last one samples the first token (the ring's token 0).
      let t0 = performance.now();
      if (this.config.ropeScaling.ropeType === "dynamic") {
        // Each decode step's row uses the frequencies of its own sequence length.
        for (let p = P; p < P + maxTokens - 1; p++) this.#writeRope(p, p + 1, p + 1);
      }
      for (let start = 0; start < P; start += this.chunkRows) {
        const chunk = promptIds.slice(start, start + this.chunkRows);
        const last = start + chunk.length === P;
        checks.run(() => {
          this.#writeRope(start, start + chunk.length, P); // the prompt's frequencies, in every chunk
          this.#writeState(start);
          device.queue.writeBuffer(this.#act.ids.buffer, 0, new Uint32Array(chunk));
          const encoder = device.createCommandEncoder();
          if (last) this.#writeMask(constraint, []);
          this.#program(chunk.length, last ? chooser : "cache", constraint !== undefined).program.encode(encoder);
          if (last) ring!.submit(encoder);
          else device.queue.submit([encoder.finish()]);
        });
      }
      if (stats) stats.encodeMs += performance.now() - t0;
      let step: Program | undefined;
      checks.run(() => step = this.#program(1, chooser, constraint !== undefined).program); // pipelines compile here
      const generated: number[] = [];
      while (ring.pending > 0 || ring.room) {
        t0 = performance.now();
        // Submit until the ring is full: the steps of up to `inFlight` readbacks are queued ahead.
        if (ring.room) {
          checks.run(() => {
            while (ring!.room) {
              this.#writeMask(constraint, generated);
              const encoder = device.createCommandEncoder();
              step!.encode(encoder);
              ring!.submit(encoder);
              if (stats) stats.decodeSteps++;
            }
          });
        }
        if (stats) {
          const dt = performance.now() - t0;
          stats.encodeMs += dt;
          stats.decodeEncodeMs += dt;
        }
        await checks.check();
        const { first, ids } = await ring.read();
        for (const [k, id] of ids.entries()) {
          if (signal?.aborted) throw signal.reason;
          if (id >= this.config.vocabSize) throw new Error(`${where}: ${unchosen(id, first + k, P)}`);
          yield id;
          this.#checkNotDestroyed("generate");
          generated.push(id);
          if (eos.has(id)) return;
        }
      }
    } finally {
      await ring?.destroy(); // waits for the readbacks still in flight (their ids are dropped)
      this.#length = 0;
      this.#leave();
    }
  }

  /**
   * GPU time of decode steps at a cache length, by timestamp queries: `steps` steps in one command
   * buffer, one pass each, timed from the first pass's start to the last one's end (or the sum of
   * the passes where the clock does not run across them; the state, and so the position, advances
   * each step as in generation).
   *
   * @param position the cache length the first step runs at (the cache's contents are whatever it holds)
   * @param steps steps to time
   * @returns milliseconds per step, or null without the timestamp-query feature
   */
  async timeDecodeSteps(position: number, steps: number): Promise<number | null> {
    this.#enter("timeDecodeSteps");
    try {
      return await this.#timeDecodeSteps(position, steps);
    } finally {
      this.#leave();
    }
  }

  async #timeDecodeSteps(position: number, steps: number): Promise<number | null> {
    if (position + steps > this.maxSeq) {
      throw new Error(`LlamaEngine.timeDecodeSteps: positions past maxSeq ${this.maxSeq}`);
    }
    return await this.#timePrograms(
      position,
      Array.from({ length: steps }, () => this.#program(1, "argmax").program),
      steps,
    );
  }

  /**
   * GPU time of prefilling `rows` tokens (ids 0..) into an empty cache, by timestamp queries: the
   * chunks as `generate` submits them, each timed on its own, summed.
   *
   * @param rows prompt length (at most maxSeq)
   * @returns milliseconds, or null without the timestamp-query feature
   */
  async timePrefill(rows: number): Promise<number | null> {
    this.#enter("timePrefill");
    try {
      return await this.#timePrefill(rows);
    } finally {
      this.#leave();
    }
  }

  async #timePrefill(rows: number): Promise<number | null> {
    if (!Number.isSafeInteger(rows) || rows < 1 || rows > this.maxSeq) {
      throw new Error(`LlamaEngine.timePrefill: rows must be an integer in [1, ${this.maxSeq}], got ${rows}`);
    }
    let ms = 0;
    for (let start = 0; start < rows; start += this.chunkRows) {
      const n = Math.min(this.chunkRows, rows - start);
      const ids = new Uint32Array(n).map((_, i) => (start + i) % this.config.vocabSize);
      this.#device.queue.writeBuffer(this.#act.ids.buffer, 0, ids);
      this.#writeRope(start, start + n, rows);
      const t = await this.#timePrograms(start, [this.#program(n, start + n === rows ? "argmax" : "cache").program], 1);
      if (t === null) return null;
      ms += t;
    }
    return ms;
  }

  /**
   * Where a call's GPU time goes: its dispatches each in a pass of its own with timestamps (so the
   * sum includes no inter-dispatch barrier of the one-pass call, and each pass adds its own launch).
   * A decode step (`rows` 1) runs at cache length `position`; a prefill of `rows` tokens (ids
   * 0, 1, ...) runs from position 0.
   *
   * @param rows 1 for a decode step, else the prefill's rows (at most a chunk's)
   * @param position the cache length of a decode step
   * @returns each dispatch's label (layer numbers and row blocks removed) and milliseconds, in
   *   order, or null without the timestamp-query feature
   */
  async profile(rows: number, position?: number): Promise<{ kernel: string; ms: number }[] | null> {
    this.#enter("profile");
    try {
      return await this.#profile(rows, position ?? 0);
    } finally {
      this.#leave();
    }
  }

  async #profile(rows: number, position = 0): Promise<{ kernel: string; ms: number }[] | null> {
    const device = this.#device;
    if (!device.features.has("timestamp-query")) return null;
    if (rows > this.chunkRows) throw new Error(`LlamaEngine.profile: ${rows} rows exceed a chunk (${this.chunkRows})`);
    const { program, labels } = this.#program(rows, "argmax");
    if (rows === 1) {
      this.#writeRope(position, Math.min(this.maxSeq, position + 1), position + 1);
      this.#writeState(position);
    } else {
      this.#device.queue.writeBuffer(
        this.#act.ids.buffer,
        0,
        new Uint32Array(rows).map((_, i) => i % this.config.vocabSize),
      );
      this.#writeRope(0, rows, rows);
      this.#writeState(0);
    }
    try {
      const ns = await dispatchTimes(this.#gpu, "LlamaEngine.profile", program.steps);
      return labels.map((label, i) => ({
        kernel: label.replace(/model\.layers\.\d+\./, "").replace(/\[\d+:\d+\]$/, ""),
        ms: Number(ns[i]) / 1e6,
      }));
    } finally {
      this.#length = 0;
    }
  }

  async #timePrograms(position: number, programs: Program[], per: number): Promise<number | null> {
    const t = await this.#traceStepsOf(position, programs);
    if (!t) return null;
    // From the first pass's start to the last one's end (gaps between passes included); where the
    // adapter's clock does not run across passes, the sum of the passes.
    const ns = t.spanNs >= t.passesNs ? t.spanNs : t.passesNs;
    return ns > 0 ? ns / 1e6 / per : null;
  }

  /** Programs in one command buffer, a pass each from `position` on: the span and the passes' sum, in ns. */
  async #traceStepsOf(position: number, programs: Program[]): Promise<{ spanNs: number; passesNs: number } | null> {
    const device = this.#device;
    if (!device.features.has("timestamp-query")) return null;
    this.#writeRope(position, Math.min(this.maxSeq, position + programs.length), position + 1);
    this.#writeState(position);
    try {
      const { ticks: t } = await timestampPasses(
        this.#gpu,
        "LlamaEngine: a trace of steps",
        programs.length,
        (encoder, writes) => {
          programs.forEach((p, i) => p.encode(encoder, writes(i)));
        },
      );
      const last = t.length - 1;
      const spanNs = t[last] > t[0] ? Number(t[last] - t[0]) : 0;
      let passesNs = 0;
      for (let i = 0; i < programs.length; i++) {
        passesNs += t[2 * i + 1] > t[2 * i] ? Number(t[2 * i + 1] - t[2 * i]) : 0;
      }
      return { spanNs, passesNs };
    } finally {
      this.#length = 0;
    }
  }

  /**
   * Where the GPU time of decode steps goes, by timestamp queries around each step's pass (`steps`
   * steps back to back in one command buffer, as {@link timeDecodeSteps} runs them): per step, the
   * time inside its pass (its dispatches and the barriers between them) and the time between one
   * pass's end and the next one's start.
   *
   * @param position the cache length of the first step
   * @param steps steps to run (at least 2)
   * @returns milliseconds per step in passes and between them, or null without the timestamp-query
   *   feature (or where the adapter's clock does not run across passes)
   */
  async traceDecodeSteps(position: number, steps: number): Promise<{ passMs: number; gapMs: number } | null> {
    this.#enter("traceDecodeSteps");
    try {
      return await this.#traceDecodeSteps(position, steps);
    } finally {
      this.#leave();
    }
  }

  async #traceDecodeSteps(position: number, steps: number): Promise<{ passMs: number; gapMs: number } | null> {
    if (!Number.isSafeInteger(position) || position < 0) {
      throw new Error(`LlamaEngine.traceDecodeSteps: position must be a non-negative integer, got ${position}`);
    }
    if (!Number.isSafeInteger(steps) || steps < 2 || position + steps > this.maxSeq) {
      throw new Error(`LlamaEngine.traceDecodeSteps: steps must be an integer >= 2 within maxSeq ${this.maxSeq}`);
    }
    const t = await this.#traceStepsOf(
      position,
      Array.from({ length: steps }, () => this.#program(1, "argmax").program),
    );
    if (!t || t.spanNs < t.passesNs) return null;
    return { passMs: t.passesNs / 1e6 / steps, gapMs: (t.spanNs - t.passesNs) / 1e6 / (steps - 1) };
  }

  /** Bytes of the resident weights (what a decode step reads at least). */
  get weightBytes(): number {
    return weightBytes(this.#weights);
  }

  /** Bytes of the embedding table as stored (a decode step reads one row of it). */
  get embeddingBytes(): number {
    return this.#embedding.blocks.reduce((s, b) => s + b.weight.buffer.size + (b.scales?.buffer.size ?? 0), 0);
  }

  /** Bytes of every buffer the engine holds (weights, KV cache, activations, its programs' params). */
  get residentBytes(): number {
    let bytes = this.#owned.reduce((s, b) => s + b.size, 0);
    for (const { program } of this.#programs.values()) {
      for (const step of program.steps) bytes += step.uniform?.size ?? 0;
    }
    return bytes;
  }

  /**
   * Frees every buffer the engine made (not the device). During a call (a generation in progress),
   * the buffers are freed when that call ends, and the call ends at its next step with an error
   * saying the engine was destroyed; every later call is refused.
   */
  destroy(): void {
    this.#destroyed = true;
    if (this.#busy === undefined) this.#free();
  }

  #free(): void {
    for (const { program } of this.#programs.values()) program.destroy();
    this.#programs.clear();
    for (const b of this.#owned) b.destroy();
    this.#owned.length = 0;
  }

  /** Claims the engine for one call, refusing a destroyed engine or a second call at once, by name. */
  #enter(what: string): void {
    if (this.#destroyed) throw new Error(`LlamaEngine.${what}: the engine was destroyed`);
    if (this.#busy !== undefined) {
      throw new Error(
        `LlamaEngine.${what}: ${this.#busy} is running on this engine, and calls on one engine share its buffers ` +
          `(await it first, or load a second engine)`,
      );
    }
    this.#busy = `${what}()`;
  }

  #leave(): void {
    this.#busy = undefined;
    if (this.#destroyed) this.#free();
  }

  /** Throws when the engine was destroyed during the running call. */
  #checkNotDestroyed(what: string): void {
    if (this.#destroyed) throw new Error(`LlamaEngine.${what}: the engine was destroyed during the call`);
  }
}

/** Checks a sampler before any GPU work: its mode, and its settings as the GPU takes them (f32). */
function validateSampler(where: string, options: SamplerOptions): void {
  if (options.mode === "greedy") return;
  if (options.mode !== "sample") {
    const mode = JSON.stringify((options as { mode: unknown }).mode);
    throw new Error(`${where}: sampler mode must be "greedy" or "sample", got ${mode}`);
  }
  validateSampleOptions(`${where}: sampler `, options, true);
}

/** Why a GPU sampler wrote no token for generated token `k` of a prompt of `P` tokens (`NONFINITE_LOGITS` or `NO_POSSIBLE_TOKEN`). */
function unchosen(id: number, k: number, P: number): string {
  const at = `token ${k} (the logits of position ${P + k - 1})`;
  return id === NONFINITE_LOGITS
    ? `${at}: the logits hold NaN (or +Infinity, which sampling cannot draw from): the weights or activations are not finite`
    : `${at}: every allowed logit is -Infinity, so no token is possible`;
}
