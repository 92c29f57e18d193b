/**
 * Qwen3 as a causal LM (transformers' `Qwen3ForCausalLM`): greedy generation with a KV cache, the loop
 * kept on the GPU, as two programs of ops built per `generate` call and replayed:
 *
 * - prefill, over the whole prompt: the encoder's forward (`layer.ts`, causal attention through
 *   gqa's prefill path), each layer's rotated keys and values also written into the cache
 *   (`kv_cache.ts`); then the last position's hidden state picked by ops/gather, the final norm, the
 *   head, and the greedy choice of the first new token.
 * - decode, one token at a time: the cache position of the token unmasked, the token's embedding, the
 *   same layer with M = 1 (each product a GEMV: ops/matvec in f32 and q8), its key and value written at
 *   its position and attention through gqa's decode path over the cache; the final norm, the head, and
 *   the greedy choice of the next token.
 *
 * The choice is ops/sample's `argmaxTokenPlan` (`torch.argmax`: the first largest logit) on the GPU: it
 * writes the id where the next decode step's embedding gather reads it and into the generation's record
 * of tokens, and advances the loop's state (`[position, step]`), whose position the decode program's
 * RoPE, cache write and mask write read. So every decode step is the same command sequence, which
 * `generate` submits back to back without waiting for any of them; the ids come back in groups through
 * llm/'s {@link TokenRing} (`readEvery` ids a readback, `inFlight` readbacks outstanding), the first
 * token alone. Steps already submitted past a stop id are discarded, never yielded. With `onLogits`,
 * each step's logits are read back before the next step is submitted (one readback per token: the loop
 * waits on the host).
 *
 * The head is the embedding table when tied (`embedding.ts`'s row blocks, one ops/matvec each into its
 * range of one logits tensor, so a table past the binding limit works), else `lm_head.weight` held the
 * same way. Greedy only: no temperature sampling (ops/sample's `sampleTokenPlan` would take argmax's
 * place in the same loop). Generation stops after a stop id (which is yielded) or `maxTokens` ids.
 *
 * `generate` runs the programs {@link Qwen3ForCausalLM.prepare} builds (a {@link Qwen3Generation}); a
 * caller that times the programs (`timeProgram`) or runs its own loop uses that seam directly.
 *
 * @module
 */

import { type GpuTensor, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import { checkKeys } from "../../ops/validate.ts";
import { checkIds } from "../../llm/tokenizer/tokenizer.ts";
import type { Program } from "../../harness/program.ts";
import { gatherPlan } from "../../ops/gather/mod.ts";
import { rmsnormPlan } from "../../ops/rmsnorm/mod.ts";
import { argmaxTokenPlan, NONFINITE_LOGITS } from "../../ops/sample/mod.ts";
import { indexCopyPlan } from "../../ops/scatter/mod.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { TokenRing, tokenRingGrouping } from "../../llm/token_ring.ts";
import { ErrorScopeBatch } from "../../llm/error_scopes.ts";
import { type RopeTables, ropeTables, sequenceAttentionBuffers, sequenceAttentionSteps } from "./attention.ts";
import type { Qwen3Config } from "./config.ts";
import { embeddingSteps, type EmbeddingTable, headSteps } from "./embedding.ts";
import { allocKvCache, cacheWriteSteps, decodeAttentionSteps, decodeBuffers, type KvCache } from "./kv_cache.ts";
import { layerBuffers, layerSteps } from "./layer.ts";
import type { Qwen3Format } from "./linear.ts";
import { destroyQwen3Weights, loadQwen3Weights, qwen3WeightBytes, type Qwen3Weights } from "./load.ts";
import { type Step, Workspace } from "./steps.ts";
import { openQwen3Checkpoint } from "./weights.ts";

/** Options of {@link Qwen3ForCausalLM.load}. */
export interface Qwen3CausalLMOptions {
  /** How the layers' matrices are held: `f32` (default) or `q8`. The embedding and head stay f32. */
  format?: Qwen3Format;
  /** Called after each tensor with bytes of the checkpoint read so far and to read in all. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
}

/** Options of {@link Qwen3ForCausalLM.generate}. */
export interface Qwen3GenerateOptions {
  /** Most ids generated (default 64). */
  maxTokens?: number;
  /** Ids that end generation, yielded (default the config's `eos_token_id`). */
  stopIds?: readonly number[];
  /**
   * Called with each step's logits `[vocab]` (step 0: the prompt's last position) before its id is
   * yielded. It makes the loop wait on the host: each step's logits are read back before the next
   * step is submitted (`readEvery` and `inFlight` are 1).
   */
  onLogits?: (logits: Float32Array, step: number) => void;
  /** Ids read back at once after the first (default 16; 1 with `onLogits`). */
  readEvery?: number;
  /** Readbacks outstanding at once: groups of steps queued ahead of the ids in hand (default 4; 1 with `onLogits`). */
  inFlight?: number;
}

/** The keys {@link Qwen3GenerateOptions} has. */
const GENERATE_OPTION_KEYS = ["maxTokens", "stopIds", "onLogits", "readEvery", "inFlight"];

/** The two programs of one generation and the tensors the host and the loop write. */
interface Generation {
  work: Workspace;
  cache: KvCache;
  prefill: Program;
  /** The prompt's ids, i32 `[P]`. */
  promptIds: GpuTensor;
  decode: Program;
  /** The loop's state, u32 `[position, step, 0, 0]` (ops/sample's): the next decode step's position and token index. */
  state: GpuTensor;
  /** The last chosen id, u32 `[1]`: the next decode step's input. */
  token: GpuTensor;
  /** Token k's id at k, u32 `[maxTokens]`. */
  tokens: GpuTensor;
  logits: GpuTensor;
}

/**
 * One generation's programs, made by {@link Qwen3ForCausalLM.prepare}: the prompt's ids written into
 * the prefill program's inputs and the prompt's positions of the KV cache unmasked. Until
 * {@link Qwen3Generation.destroy} it is the model's one running generation.
 *
 * The programs pass the loop's state on the GPU: a run's greedy choice is the next decode run's
 * input token, and each run advances the position (prefill by the prompt's length, decode by one). A
 * decode run past the capacity (a timing loop's replays) runs the same dispatches, but what it writes
 * means nothing: its cache and mask writes fall outside the cache and are dropped.
 */
export interface Qwen3Generation {
  /** Tokens of the prompt. */
  readonly promptLength: number;
  /** Tokens the generation may produce: the prefill's and `maxTokens - 1` decode steps'. */
  readonly maxTokens: number;
  /** Positions the KV cache holds: the prompt and `maxTokens - 1` decoded tokens. */
  readonly capacity: number;
  /**
   * The forward over the whole prompt: writes each layer's keys and values at positions
   * `0 .. promptLength - 1` of the cache, the logits of the prompt's last position, and their greedy
   * choice (token 0, the first decode run's input); advances the position by `promptLength` (from 0 in
   * a new generation).
   */
  readonly prefill: Program;
  /**
   * One token's forward: the last chosen (or {@link Qwen3Generation.feed fed}) token at the loop's
   * position, that position unmasked, its key and value written there, its logits and their greedy
   * choice; advances the position by one. It attends over the whole capacity under the cache's mask,
   * so every position costs the same.
   */
  readonly decode: Program;
  /**
   * Sets the next decode run's input: its token id and position (from then on the loop goes on from
   * there); positions after it in the cache are masked again. For a caller that drives the loop
   * itself (its own choice of token, or a replay at one position).
   *
   * @param id the token id, in `[0, vocab)`
   * @param position its position, in `[promptLength, capacity)`
   * @throws Error naming a bad id or position, or a destroyed generation
   */
  feed(id: number, position: number): void;
  /**
   * Reads back the id the last prefill or decode run chose.
   *
   * @returns the id
   * @throws Error when the logits held NaN (no id was chosen), or after destroy
   */
  chosen(): Promise<number>;
  /**
   * Reads back the logits the last prefill or decode run wrote.
   *
   * @returns `[vocab]` f32
   * @throws Error after destroy
   */
  logits(): Promise<Float32Array>;
  /** Frees the programs and their tensors; the model may then prepare another generation. */
  destroy(): void;
}

/**
 * A Qwen3 causal LM on the GPU (see the module doc).
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * import { parseQwen3Config, Qwen3ForCausalLM } from "@xpu/ops/models/qwen3";
 * const dir = "models/qwen3/fixtures"; // Anima's tiny Qwen3 (random weights, tied head)
 * const store = await SafetensorsFile.open(bytesSource(await Deno.readFile(`${dir}/anima-tiny-qwen3.safetensors`)));
 * const config = parseQwen3Config(await Deno.readTextFile(`${dir}/anima-tiny-config.json`));
 * const gpu = await acquireDevice();
 * const lm = await Qwen3ForCausalLM.load(gpu, store, config, { format: "q8" });
 * const ids: number[] = [];
 * for await (const id of lm.generate([5, 6, 7], { maxTokens: 4 })) ids.push(id);
 * lm.destroy();
 * gpu.destroy();
 * ```
 */
export class Qwen3ForCausalLM {
  /** The model. */
  readonly config: Qwen3Config;
  /** How its matrices are held. */
  readonly format: Qwen3Format;
  readonly #gpu: ResidentDevice;
  readonly #weights: Qwen3Weights;
  readonly #embedding: EmbeddingTable;
  readonly #head: EmbeddingTable;
  readonly #constants: Workspace;
  readonly #rope: RopeTables;
  #running = false;
  #destroyed = false;

  private constructor(gpu: ResidentDevice, weights: Qwen3Weights) {
    this.#gpu = gpu;
    this.#weights = weights;
    this.config = weights.config;
    this.format = weights.format;
    if (!weights.embedding) throw new Error("qwen3 causal LM: its weights must hold the embedding table");
    this.#embedding = weights.embedding;
    this.#head = weights.head ?? weights.embedding;
    this.#constants = new Workspace(gpu);
    this.#rope = ropeTables(this.#constants, this.config);
  }

  /**
   * Checks a checkpoint and loads the whole model (an untied head included).
   *
   * @param gpu the device
   * @param store the checkpoint (`Qwen3ForCausalLM` names; a bare `Qwen3Model` one only with a tied head)
   * @param config the model
   * @param options format, progress
   * @returns the model
   * @throws Error for a checkpoint that is not this config's, a head it lacks, or a limit exceeded
   */
  static async load(
    gpu: ResidentDevice,
    store: TensorStore,
    config: Qwen3Config,
    options: Qwen3CausalLMOptions = {},
  ): Promise<Qwen3ForCausalLM> {
    requireDevice("qwen3", gpu);
    checkKeys("qwen3", "option", options, ["format", "onProgress"]);
    const checkpoint = openQwen3Checkpoint(store, config);
    if (!config.tieWordEmbeddings && checkpoint.lmHead === null) {
      throw new Error("qwen3: the head is not tied and a bare Qwen3Model checkpoint holds no lm_head.weight");
    }
    const weights = await loadQwen3Weights(gpu, checkpoint, config, { ...options, head: true });
    return new Qwen3ForCausalLM(gpu, weights);
  }

  /** Bytes of the model's weights on the GPU. */
  get weightBytes(): number {
    return qwen3WeightBytes(this.#weights);
  }

  #build(P: number, maxTokens: number): Generation {
    const gpu = this.#gpu, config = this.config, w = this.#weights, H = config.hiddenSize;
    const capacity = P + maxTokens - 1;
    const work = new Workspace(gpu);
    try {
      const cache = allocKvCache(gpu, work, config, w.layers.length, capacity);
      const normed = work.alloc("f32", H, "last hidden state normed");
      const logits = work.alloc("f32", config.vocabSize, "logits");
      const finalNorm = rmsnormPlan(gpu, { rows: 1, cols: H, groups: 1, eps: config.rmsNormEps });

      // The loop's state, kept on the GPU: the chosen id, the record of ids, [position, step].
      const state = work.alloc("u32", 4, "loop state");
      const token = work.alloc("u32", 1, "chosen id");
      const tokens = work.alloc("u32", maxTokens, "chosen ids");
      const choose = (advance: number): Step => {
        const plan = argmaxTokenPlan(gpu, { vocab: config.vocabSize, steps: maxTokens, advance });
        const [, , , , partial, counter] = plan.bindings;
        return [plan, [
          logits,
          token,
          tokens,
          state,
          work.alloc("u32", partial.length, "argmax partials"),
          work.alloc("u32", counter.length, "argmax counters"),
        ]];
      };
      // The same words as the i32 the gather and the position readers take (ids and positions fit).
      const asI32 = (t: GpuTensor, length: number): GpuTensor => ({ buffer: t.buffer, dtype: "i32", length });

      // Prefill: P tokens at positions 0..P-1 (the same tensor indexes the cache writes).
      const promptIds = work.alloc("i32", P, "prompt ids");
      const positions = work.upload(Int32Array.from({ length: P }, (_, t) => t), "prompt positions");
      const seq = layerBuffers(work, config, P);
      const attn = sequenceAttentionBuffers(work, config, P);
      const last = work.alloc("f32", H, "last position's hidden state");
      const lastIndex = work.upload(new Int32Array([P - 1]), "last position");
      const prefillSteps: Step[] = embeddingSteps(gpu, this.#embedding, P, promptIds, seq.x);
      for (const [i, layer] of w.layers.entries()) {
        prefillSteps.push(
          ...layerSteps(
            gpu,
            config,
            layer,
            i,
            seq,
            positions,
            this.#rope,
            (li, qkv, o) =>
              sequenceAttentionSteps(
                gpu,
                config,
                P,
                qkv,
                o,
                attn,
                (kh, vh) => cacheWriteSteps(gpu, config, cache, li, P, kh, vh, positions),
              ),
          ),
        );
      }
      prefillSteps.push(
        [gatherPlan(gpu, { rows: P, cols: H, indexLength: 1 }), [seq.x, lastIndex, last]],
        [finalNorm, [last, w.norm!, normed]],
        ...headSteps(gpu, this.#head, normed, logits),
        choose(P),
      );
      const prefill = gpu.program(`qwen3 prefill, ${P} tokens`, prefillSteps);

      // Decode: the last chosen token at the state's position, which it unmasks first.
      const position = asI32(state, 1);
      const visible = work.upload(new Float32Array(1), "mask value of a written position");
      const unmask = indexCopyPlan(gpu, { outer: 1, rows: capacity, cols: 1, indexLength: 1 });
      const one = layerBuffers(work, config, 1);
      const dec = decodeBuffers(gpu, work, config, capacity);
      const decodeSteps: Step[] = [
        [unmask, [visible, position, cache.mask]],
        ...embeddingSteps(gpu, this.#embedding, 1, asI32(token, 1), one.x),
      ];
      for (const [i, layer] of w.layers.entries()) {
        decodeSteps.push(
          ...layerSteps(
            gpu,
            config,
            layer,
            i,
            one,
            position,
            this.#rope,
            (li, qkv, o) => decodeAttentionSteps(gpu, config, cache, li, qkv, position, o, dec),
          ),
        );
      }
      decodeSteps.push(
        [finalNorm, [one.x, w.norm!, normed]],
        ...headSteps(gpu, this.#head, normed, logits),
        choose(1),
      );
      const decode = gpu.program(`qwen3 decode, cache of ${capacity}`, decodeSteps);
      return { work, cache, prefill, promptIds, decode, state, token, tokens, logits };
    } catch (e) {
      work.destroy();
      throw e;
    }
  }

  #checkId(id: number, what: string): void {
    const V = this.config.vocabSize;
    if (!Number.isInteger(id) || id < 0 || id >= V) {
      throw new Error(`qwen3: ${what} = ${id} is not a token id in [0, ${V})`);
    }
  }

  /** Checks a prompt and maxTokens, claims the model and builds the generation, the prompt written. */
  #prepare(ids: ArrayLike<number>, maxTokens: number): Generation {
    if (this.#destroyed) throw new Error("qwen3: used after destroy()");
    checkIds("qwen3", ids);
    if (ids.length < 1) throw new Error("qwen3: the prompt must hold at least one token");
    for (let i = 0; i < ids.length; i++) this.#checkId(ids[i], `ids[${i}]`);
    if (!Number.isInteger(maxTokens) || maxTokens < 1) {
      throw new Error(`qwen3: maxTokens must be an integer >= 1, got ${maxTokens}`);
    }
    if (this.#running) throw new Error("qwen3: a generation is already running on this model");
    const P = ids.length;
    const g = this.#build(P, maxTokens);
    this.#running = true;
    const queue = this.#gpu.device.queue;
    queue.writeBuffer(g.promptIds.buffer, 0, Int32Array.from(ids));
    queue.writeBuffer(g.cache.mask.buffer, 0, new Float32Array(P)); // the prompt's positions are visible
    return g;
  }

  #release(g: Generation): void {
    g.prefill.destroy();
    g.decode.destroy();
    g.work.destroy();
    this.#running = false;
  }

  /**
   * Builds one generation's programs for a prompt, its ids written: what {@link generate} runs, for a
   * caller that times the programs or drives the loop itself (run `prefill`, then `decode` once per
   * further token; `chosen()` and `logits()` read back what the last run chose and computed).
   *
   * @param ids the prompt's token ids
   * @param maxTokens tokens the generation may produce (the cache holds `ids.length + maxTokens - 1` positions)
   * @returns the generation; destroy it before the model prepares another
   * @throws Error naming a bad id or maxTokens, a cache over the binding limit, or a generation already running
   *
   * @example
   * ```ts
   * import { acquireDevice } from "@xpu/ops/harness";
   * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
   * import { parseQwen3Config, Qwen3ForCausalLM } from "@xpu/ops/models/qwen3";
   * const dir = "models/qwen3/fixtures";
   * const store = await SafetensorsFile.open(bytesSource(await Deno.readFile(`${dir}/anima-tiny-qwen3.safetensors`)));
   * const config = parseQwen3Config(await Deno.readTextFile(`${dir}/anima-tiny-config.json`));
   * const gpu = await acquireDevice();
   * const lm = await Qwen3ForCausalLM.load(gpu, store, config);
   * const g = lm.prepare([5, 6, 7], 3);
   * await g.prefill.run();
   * const first = await g.chosen(); // the greedy choice after the prompt's last token
   * await g.decode.run(); // that token at position 3
   * const second = await g.chosen();
   * g.feed(first, 3); // back to position 3: the same step again
   * await g.decode.run();
   * const logits = await g.logits(); // those whose greedy choice is `second`
   * g.destroy();
   * lm.destroy();
   * gpu.destroy();
   * ```
   */
  prepare(ids: ArrayLike<number>, maxTokens = 64): Qwen3Generation {
    const g = this.#prepare(ids, maxTokens);
    const P = ids.length, capacity = g.cache.capacity, queue = this.#gpu.device.queue;
    let live = true;
    const usable = () => {
      if (!live) throw new Error("qwen3: generation used after destroy()");
    };
    return {
      promptLength: P,
      maxTokens,
      capacity,
      prefill: g.prefill,
      decode: g.decode,
      feed: (id, position) => {
        usable();
        this.#checkId(id, "id");
        if (!Number.isInteger(position) || position < P || position >= capacity) {
          throw new Error(
            `qwen3: position must be an integer in [${P}, ${capacity}) (after the prompt, in the cache), got ${position}`,
          );
        }
        queue.writeBuffer(g.token.buffer, 0, new Uint32Array([id]));
        queue.writeBuffer(g.state.buffer, 0, new Uint32Array([position, position - P + 1, 0, 0]));
        const hidden = new Float32Array(capacity - position - 1).fill(-Infinity); // positions after it
        if (hidden.length > 0) queue.writeBuffer(g.cache.mask.buffer, 4 * (position + 1), hidden);
      },
      chosen: async () => {
        usable();
        const [id] = await this.#gpu.read(g.token) as Uint32Array;
        if (id >= this.config.vocabSize) throw new Error(`qwen3: ${unchosen(id)}`);
        return id;
      },
      logits: async () => {
        usable();
        return await this.#gpu.read(g.logits) as Float32Array;
      },
      destroy: () => {
        if (!live) return;
        live = false;
        this.#release(g);
      },
    };
  }

  /**
   * Greedy continuation of a prompt, the loop on the GPU (see the module doc): ids yielded as their
   * readbacks land.
   *
   * @param ids the prompt's token ids (for a chat, {@link qwen3ChatPrompt}'s text tokenized)
   * @param options most tokens, stop ids, a logits callback, the readbacks' grouping
   * @returns the generated ids, the stop id included when one ended generation
   * @throws Error naming a bad id or option before any GPU work, or a call while another generation
   *   runs; while generating, an Error naming the step whose logits held NaN
   */
  async *generate(ids: ArrayLike<number>, options: Qwen3GenerateOptions = {}): AsyncGenerator<number> {
    const where = "qwen3 generate";
    checkKeys("qwen3", "option", options, GENERATE_OPTION_KEYS);
    const maxTokens = options.maxTokens ?? 64;
    const V = this.config.vocabSize;
    const stops: unknown = options.stopIds ?? this.config.eosTokenIds;
    if (!Array.isArray(stops) || !stops.every((id) => Number.isInteger(id) && id >= 0 && id < V)) {
      throw new Error(`qwen3: stopIds must be an array of token ids in [0, ${V}), got ${JSON.stringify(stops)}`);
    }
    const stopIds = new Set<number>(stops);
    const onLogits = options.onLogits;
    if (onLogits !== undefined && typeof onLogits !== "function") {
      throw new Error(`qwen3: onLogits must be a function, got ${String(onLogits)}`);
    }
    // A logits callback reads each step's logits before the next step overwrites them: one id a readback.
    const grouping = tokenRingGrouping("qwen3", options, Boolean(onLogits));
    const g = this.#prepare(ids, maxTokens);
    const gpu = this.#gpu, device = gpu.device;
    let ring: TokenRing | undefined;
    const step = (program: Program) => {
      const encoder = device.createCommandEncoder();
      program.encode(encoder);
      ring!.submit(encoder);
    };
    try {
      // Each batch of submissions runs in error scopes of its own; their outcomes are examined before
      // the next readback, so a rejected step fails the iterator.
      const checks = new ErrorScopeBatch(gpu, where);
      ring = new TokenRing(device, g.tokens, maxTokens, grouping);
      checks.run(() => step(g.prefill));
      while (ring.pending > 0 || ring.room) {
        if (ring.room) {
          checks.run(() => {
            while (ring!.room) step(g.decode);
          });
        }
        await checks.check();
        const { first, ids: chosen } = await ring.read();
        for (const [k, id] of chosen.entries()) {
          if (id >= this.config.vocabSize) throw new Error(`${where}: token ${first + k}: ${unchosen(id)}`);
          if (onLogits) onLogits(await gpu.read(g.logits) as Float32Array, first + k);
          yield id;
          if (stopIds.has(id)) return;
        }
      }
    } finally {
      await ring?.destroy();
      this.#release(g);
    }
  }

  /** Frees everything the model holds on the GPU (the device is the caller's). */
  destroy(): void {
    if (this.#destroyed) return;
    if (this.#running) {
      throw new Error("qwen3: destroy() while a generation runs (finish, return or destroy it first)");
    }
    this.#constants.destroy();
    destroyQwen3Weights(this.#weights);
    this.#destroyed = true;
  }
}

/** Why the GPU's greedy choice wrote no id: the marker ops/sample's argmax wrote instead. */
function unchosen(id: number): string {
  return id === NONFINITE_LOGITS
    ? "the logits hold NaN: the weights or activations are not finite"
    : "no logit is above -Infinity, so no token is possible";
}

/** The special tokens that end a Qwen3 chat turn (and the document), in Qwen's vocabulary. */
export const QWEN3_STOP_TOKENS: readonly string[] = ["<|im_end|>", "<|endoftext|>"];

/**
 * A one-turn chat prompt in Qwen3's template, as `apply_chat_template(..., add_generation_prompt=True)`
 * writes it with thinking enabled (no empty think block): `<|im_start|>user\n{message}<|im_end|>\n<|im_start|>assistant\n`.
 *
 * @param message the user's message
 * @returns the text to tokenize (its special tokens are added tokens of Qwen's tokenizer.json)
 *
 * @example
 * ```ts
 * import { qwen3ChatPrompt } from "@xpu/ops/models/qwen3";
 * qwen3ChatPrompt("a red fox"); // "<|im_start|>user\na red fox<|im_end|>\n<|im_start|>assistant\n"
 * ```
 */
export function qwen3ChatPrompt(message: string): string {
  if (typeof message !== "string") throw new Error(`qwen3ChatPrompt: message must be a string, got ${String(message)}`);
  return `<|im_start|>user\n${message}<|im_end|>\n<|im_start|>assistant\n`;
}

/**
 * The ids of {@link QWEN3_STOP_TOKENS} in a tokenizer's vocabulary.
 *
 * @param tokenizer Qwen's tokenizer (anything whose `encode` maps each stop token to one id)
 * @returns the ids, in the order of {@link QWEN3_STOP_TOKENS}
 * @throws Error naming a stop token the tokenizer does not encode as one id
 *
 * @example
 * ```ts
 * import { qwen3StopIds } from "@xpu/ops/models/qwen3";
 * // With Qwen's tokenizer.json loaded as a ByteLevelBpeTokenizer (@xpu/ops/llm): [151645, 151643].
 * const special = new Map([["<|im_end|>", 151645], ["<|endoftext|>", 151643]]);
 * qwen3StopIds({ encode: (text) => [special.get(text) ?? 0] }); // [151645, 151643]
 * ```
 */
export function qwen3StopIds(tokenizer: { encode(text: string): number[] }): number[] {
  return QWEN3_STOP_TOKENS.map((t) => {
    const ids = tokenizer.encode(t);
    if (ids.length !== 1) {
      throw new Error(`qwen3: the tokenizer encodes ${t} as ${ids.length} ids, not one added token`);
    }
    return ids[0];
  });
}
