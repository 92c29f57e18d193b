/**
 * Qwen3 as a causal LM (transformers' `Qwen3ForCausalLM`): greedy generation with a KV cache, as two
 * programs of ops built per `generate` call and replayed:
 *
 * - prefill, over the whole prompt: the encoder's forward (`layer.ts`, causal attention through
 *   gqa's prefill path), each layer's rotated keys and values also written into the cache
 *   (`kv_cache.ts`); then the last position's hidden state picked by ops/gather, the final norm, and
 *   the head.
 * - decode, one token at a time: the same layer with M = 1, its key and value written at its position
 *   and attention through gqa's decode path over the cache; the final norm and the head. The token's
 *   id, its position and one more unmasked cache position are written into the program's inputs
 *   before each run.
 *
 * The head is the embedding table when tied (`embedding.ts`'s row blocks, one ops/matvec each, so a
 * table past the binding limit works), else `lm_head.weight` held the same way. Greedy choice is on
 * the host: the logits are read back after every step (`vocab` floats) and the first largest taken,
 * as `torch.argmax`. Generation stops after a stop id (which is yielded) or `maxTokens` ids. The
 * decode loop is driven from the host: each step waits for the previous step's logits before it is
 * submitted.
 *
 * `generate` is {@link Qwen3ForCausalLM.prepare} and a loop over the {@link Qwen3Generation} it returns;
 * a caller that times the programs (`timeProgram`) or runs its own loop uses that seam directly.
 *
 * @module
 */

import { type GpuTensor, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import { checkKeys } from "../../ops/validate.ts";
import { checkIds } from "../../llm/tokenizer/tokenizer.ts";
import type { Program } from "../../harness/program.ts";
import { gatherPlan } from "../../ops/gather/mod.ts";
import { rmsnormPlan } from "../../ops/rmsnorm/mod.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { type RopeTables, ropeTables, sequenceAttentionBuffers, sequenceAttentionSteps } from "./attention.ts";
import type { Qwen3Config } from "./config.ts";
import { blockIndices, embeddingSteps, type EmbeddingTable, headSteps } from "./embedding.ts";
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
  /** Called with each step's logits `[vocab]` (step 0: the prompt's last position), before the choice. */
  onLogits?: (logits: Float32Array, step: number) => void;
}

/** The two programs of one generation and what the host writes into them. */
interface Generation {
  work: Workspace;
  cache: KvCache;
  prefill: Program;
  prefillIndices: GpuTensor[];
  decode: Program;
  decodeIndices: GpuTensor[];
  position: GpuTensor;
  logits: GpuTensor[];
}

/**
 * One generation's programs, made by {@link Qwen3ForCausalLM.prepare}: the prompt's ids written into
 * the prefill program's inputs and the prompt's positions of the KV cache unmasked. Until
 * {@link Qwen3Generation.destroy} it is the model's one running generation.
 */
export interface Qwen3Generation {
  /** Tokens of the prompt. */
  readonly promptLength: number;
  /** Positions the KV cache holds: the prompt and `maxTokens - 1` decoded tokens. */
  readonly capacity: number;
  /**
   * The forward over the whole prompt: writes each layer's keys and values at positions
   * `0 .. promptLength - 1` of the cache and the logits of the prompt's last position.
   */
  readonly prefill: Program;
  /**
   * One token's forward at the position of the last {@link Qwen3Generation.feed}: writes its key and
   * value there and its logits. It attends over the whole capacity under the cache's mask, so every
   * position costs the same.
   */
  readonly decode: Program;
  /**
   * Writes the next token into the decode program's inputs: its id, its position, and that position
   * unmasked in the cache.
   *
   * @param id the token id, in `[0, vocab)`
   * @param position its position, in `[promptLength, capacity)`
   * @throws Error naming a bad id or position, or a destroyed generation
   */
  feed(id: number, position: number): void;
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

  #build(P: number, capacity: number): Generation {
    const gpu = this.#gpu, config = this.config, w = this.#weights, H = config.hiddenSize;
    const work = new Workspace(gpu);
    try {
      const cache = allocKvCache(gpu, work, config, w.layers.length, capacity);
      const normed = work.alloc("f32", H, "last hidden state normed");
      const logits = this.#head.blocks.map((b) => work.alloc("f32", b.rows, "logits"));
      const finalNorm = rmsnormPlan(gpu, { rows: 1, cols: H, groups: 1, eps: config.rmsNormEps });

      // Prefill: P tokens at positions 0..P-1 (the same tensor indexes the cache writes).
      const prefillIndices = this.#embedding.blocks.map(() => work.alloc("i32", P, "prompt ids"));
      const positions = work.upload(Int32Array.from({ length: P }, (_, t) => t), "prompt positions");
      const seq = layerBuffers(work, config, P);
      const attn = sequenceAttentionBuffers(work, config, P);
      const last = work.alloc("f32", H, "last position's hidden state");
      const lastIndex = work.upload(new Int32Array([P - 1]), "last position");
      const prefillSteps: Step[] = embeddingSteps(gpu, this.#embedding, P, prefillIndices, seq.x, work);
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
      );
      const prefill = gpu.program(`qwen3 prefill, ${P} tokens`, prefillSteps);

      // Decode: one token at the position written into `position`.
      const decodeIndices = this.#embedding.blocks.map(() => work.alloc("i32", 1, "token id"));
      const position = work.alloc("i32", 1, "token position");
      const one = layerBuffers(work, config, 1);
      const dec = decodeBuffers(gpu, work, config, capacity);
      const decodeSteps: Step[] = embeddingSteps(gpu, this.#embedding, 1, decodeIndices, one.x, work);
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
      decodeSteps.push([finalNorm, [one.x, w.norm!, normed]], ...headSteps(gpu, this.#head, normed, logits));
      const decode = gpu.program(`qwen3 decode, cache of ${capacity}`, decodeSteps);
      return { work, cache, prefill, prefillIndices, decode, decodeIndices, position, logits };
    } catch (e) {
      work.destroy();
      throw e;
    }
  }

  async #logits(g: Generation): Promise<Float32Array> {
    const out = new Float32Array(this.config.vocabSize);
    for (const [b, t] of g.logits.entries()) {
      out.set(await this.#gpu.read(t) as Float32Array, this.#head.blocks[b].row0);
    }
    return out;
  }

  #checkId(id: number, what: string): void {
    const V = this.config.vocabSize;
    if (!Number.isInteger(id) || id < 0 || id >= V) {
      throw new Error(`qwen3: ${what} = ${id} is not a token id in [0, ${V})`);
    }
  }

  /**
   * Builds one generation's programs for a prompt, its ids written: what {@link generate} runs, for a
   * caller that times the programs or drives the loop itself (run `prefill`, read `logits()`, then
   * per new token `feed(id, position)`, run `decode`, read `logits()`).
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
   * const g = lm.prepare([5, 6, 7], 2);
   * await g.prefill.run();
   * const first = await g.logits(); // the logits after the prompt's last token
   * g.feed(first.indexOf(Math.max(...first)), 3); // the greedy choice, at position 3
   * await g.decode.run();
   * const second = await g.logits();
   * g.destroy();
   * lm.destroy();
   * gpu.destroy();
   * ```
   */
  prepare(ids: ArrayLike<number>, maxTokens = 64): Qwen3Generation {
    if (this.#destroyed) throw new Error("qwen3: used after destroy()");
    checkIds("qwen3", ids);
    if (ids.length < 1) throw new Error("qwen3: the prompt must hold at least one token");
    for (let i = 0; i < ids.length; i++) this.#checkId(ids[i], `ids[${i}]`);
    if (!Number.isInteger(maxTokens) || maxTokens < 1) {
      throw new Error(`qwen3: maxTokens must be an integer >= 1, got ${maxTokens}`);
    }
    if (this.#running) throw new Error("qwen3: a generation is already running on this model");
    const P = ids.length, capacity = P + maxTokens - 1;
    const g = this.#build(P, capacity);
    this.#running = true;
    const queue = this.#gpu.device.queue;
    for (const [b, idx] of blockIndices(this.#embedding, ids).entries()) {
      queue.writeBuffer(g.prefillIndices[b].buffer, 0, idx);
    }
    queue.writeBuffer(g.cache.mask.buffer, 0, new Float32Array(P)); // the prompt's positions are visible
    let live = true;
    const usable = () => {
      if (!live) throw new Error("qwen3: generation used after destroy()");
    };
    return {
      promptLength: P,
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
        for (const [b, idx] of blockIndices(this.#embedding, [id]).entries()) {
          queue.writeBuffer(g.decodeIndices[b].buffer, 0, idx);
        }
        queue.writeBuffer(g.position.buffer, 0, new Int32Array([position]));
        queue.writeBuffer(g.cache.mask.buffer, 4 * position, new Float32Array(1));
      },
      logits: () => {
        usable();
        return this.#logits(g);
      },
      destroy: () => {
        if (!live) return;
        live = false;
        g.prefill.destroy();
        g.decode.destroy();
        g.work.destroy();
        this.#running = false;
      },
    };
  }

  /**
   * Greedy continuation of a prompt: ids yielded as they are chosen.
   *
   * @param ids the prompt's token ids (for a chat, {@link qwen3ChatPrompt}'s text tokenized)
   * @param options most tokens, stop ids, a logits callback
   * @returns the generated ids, the stop id included when one ended generation
   * @throws Error naming a bad id or option before any GPU work, or a call while another generation runs
   */
  async *generate(ids: ArrayLike<number>, options: Qwen3GenerateOptions = {}): AsyncGenerator<number> {
    checkKeys("qwen3", "option", options, ["maxTokens", "stopIds", "onLogits"]);
    const maxTokens = options.maxTokens ?? 64;
    const stopIds = new Set(options.stopIds ?? this.config.eosTokenIds);
    const g = this.prepare(ids, maxTokens);
    try {
      await g.prefill.run();
      for (let step = 0;; step++) {
        const logits = await g.logits();
        options.onLogits?.(logits, step);
        let best = 0;
        for (let j = 1; j < logits.length; j++) if (logits[j] > logits[best]) best = j;
        yield best;
        if (stopIds.has(best) || step + 1 === maxTokens) return;
        g.feed(best, ids.length + step);
        await g.decode.run();
      }
    } finally {
      g.destroy();
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
