/**
 * Qwen3 as a text encoder: one forward over all tokens of a prompt (causal attention among them, as
 * transformers runs `Qwen3Model` for Z-Image and Anima; no KV cache, no head), returning one of
 * transformers' `hidden_states` for every token.
 *
 * `hiddenState` is transformers' index into `output_hidden_states=True`'s tuple of
 * numHiddenLayers + 1 entries, negative counting from the end: entry 0 is the embeddings, entry i
 * (1 <= i < numHiddenLayers) the output of decoder layer i - 1, and the last entry is
 * `last_hidden_state`, after the final norm (transformers 5.17 replaces the last layer's raw output
 * with it). So:
 * - Z-Image (Qwen3-4B, 36 layers): `hiddenState: -2`, the output of layer 34 with no final norm;
 *   layer 35 and `norm.weight` are not loaded.
 * - Anima (Qwen3-0.6B): `hiddenState: -1` (the default), `last_hidden_state`.
 *
 * The forward for a prompt length is a program built on first use and replayed for every later
 * prompt of that length (the ids written into its index tensor), so a caller that encodes the same
 * length again pays only the dispatches.
 *
 * `embedding: "host"` keeps the embedding table off the GPU: each prompt's rows are read from the
 * checkpoint (`TensorStore.readRows`, only those rows' bytes) and uploaded as the first hidden state,
 * which the GPU lookup would have written bit for bit (rows are copied, not computed). Qwen3-4B's table
 * is 1.45 GiB in f32, a third of its q8 encoder; the store must stay readable while the encoder is used.
 *
 * @module
 */

import { type GpuTensor, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import { checkKeys } from "../../ops/validate.ts";
import { checkIds } from "../../llm/tokenizer/tokenizer.ts";
import type { Program } from "../../harness/program.ts";
import { copyToHost, type HostCopy } from "../../harness/host_copy.ts";
import { rmsnormPlan } from "../../ops/rmsnorm/mod.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { type RopeTables, ropeTables, sequenceAttentionBuffers, sequenceAttentionSteps } from "./attention.ts";
import type { Qwen3Config } from "./config.ts";
import { embeddingSteps, hostEmbeddingRows } from "./embedding.ts";
import { layerBuffers, layerSteps } from "./layer.ts";
import type { Qwen3Format } from "./linear.ts";
import { destroyQwen3Weights, loadQwen3Weights, qwen3WeightBytes, type Qwen3Weights } from "./load.ts";
import { type Step, Workspace } from "./steps.ts";
import { openQwen3Checkpoint } from "./weights.ts";

/** Options of {@link Qwen3Encoder.load}. */
export interface Qwen3EncoderOptions {
  /** How the layers' matrices are held: `f32` (default) or `q8` (per-row int8, quantised on load). */
  format?: Qwen3Format;
  /**
   * Which of transformers' `hidden_states` to return (see the module doc): -1 (default) is
   * `last_hidden_state`, after the final norm; -2 the output of the second-to-last layer, unnormed.
   */
  hiddenState?: number;
  /** Called after each tensor with bytes of the checkpoint read so far and to read in all. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
  /**
   * Where the token embedding lookup runs: `gpu` (default: the table on the GPU, ops/gather) or
   * `host` (each prompt's rows read from the checkpoint and uploaded; the table is not loaded).
   */
  embedding?: "gpu" | "host";
}

/** The program of one prompt length. */
interface LengthProgram {
  program: Program;
  work: Workspace;
  /** The ids `[L]` i32 (GPU lookup), or null (host lookup). */
  index: GpuTensor | null;
  /** The first hidden state `[L, hidden]`, written from the host in a host lookup. */
  input: GpuTensor;
  out: GpuTensor;
}

/**
 * Resolves transformers' hidden-state index against a layer count.
 *
 * @param hiddenState the index, negative from the end
 * @param layers numHiddenLayers
 * @returns the index in `[0, layers]`
 * @throws Error naming the index and the range
 *
 * @example
 * ```ts
 * import { resolveHiddenState } from "@xpu/ops/models/qwen3";
 * resolveHiddenState(-2, 36); // 35: Qwen3-4B's hidden_states[-2], the output of layer 34
 * resolveHiddenState(-1, 28); // 28: last_hidden_state, after the final norm
 * ```
 */
export function resolveHiddenState(hiddenState: number, layers: number): number {
  const i = hiddenState < 0 ? layers + 1 + hiddenState : hiddenState;
  if (!Number.isInteger(hiddenState) || i < 0 || i > layers) {
    throw new Error(
      `qwen3 encoder: hiddenState must be an integer in [${-(layers + 1)}, ${layers}] (transformers' hidden_states ` +
        `of a ${layers}-layer model), got ${hiddenState}`,
    );
  }
  return i;
}

/**
 * A Qwen3 text encoder on the GPU (see the module doc).
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * import { parseQwen3Config, Qwen3Encoder } from "@xpu/ops/models/qwen3";
 * const dir = "models/qwen3/fixtures"; // Anima's tiny Qwen3: 2 layers, hidden 40
 * const store = await SafetensorsFile.open(bytesSource(await Deno.readFile(`${dir}/anima-tiny-qwen3.safetensors`)));
 * const config = parseQwen3Config(await Deno.readTextFile(`${dir}/anima-tiny-config.json`));
 * const gpu = await acquireDevice();
 * const encoder = await Qwen3Encoder.load(gpu, store, config, { format: "q8", hiddenState: -2 });
 * const states = await encoder.encode([12, 7, 99]); // [3 * 40]: the output of layer 0, before any norm
 * encoder.destroy();
 * gpu.destroy();
 * ```
 */
export class Qwen3Encoder {
  /** The model. */
  readonly config: Qwen3Config;
  /** How its matrices are held. */
  readonly format: Qwen3Format;
  /** The hidden state returned, as an index in `[0, numHiddenLayers]` of transformers' `hidden_states`. */
  readonly hiddenState: number;
  readonly #gpu: ResidentDevice;
  readonly #weights: Qwen3Weights;
  readonly #constants: Workspace;
  readonly #rope: RopeTables;
  readonly #programs = new Map<number, LengthProgram>();
  /** The checkpoint's table, where the lookup runs on the host. */
  readonly #hostTable: { store: TensorStore; name: string } | null;
  #destroyed = false;

  private constructor(
    gpu: ResidentDevice,
    weights: Qwen3Weights,
    hiddenState: number,
    hostTable: { store: TensorStore; name: string } | null,
  ) {
    this.#gpu = gpu;
    this.#weights = weights;
    this.#hostTable = hostTable;
    this.config = weights.config;
    this.format = weights.format;
    this.hiddenState = hiddenState;
    this.#constants = new Workspace(gpu);
    this.#rope = ropeTables(this.#constants, this.config);
  }

  /**
   * Checks a checkpoint and loads what the chosen hidden state needs.
   *
   * @param gpu the device
   * @param store the checkpoint (`Qwen3ForCausalLM` or `Qwen3Model` names; see `weights.ts`)
   * @param config the model
   * @param options format, hidden state, progress
   * @returns the encoder
   * @throws Error for a checkpoint that is not this config's, a bad option, or a limit exceeded
   */
  static async load(
    gpu: ResidentDevice,
    store: TensorStore,
    config: Qwen3Config,
    options: Qwen3EncoderOptions = {},
  ): Promise<Qwen3Encoder> {
    requireDevice("qwen3 encoder", gpu);
    checkKeys("qwen3 encoder", "option", options, ["format", "hiddenState", "onProgress", "embedding"]);
    const checkpoint = openQwen3Checkpoint(store, config);
    const index = resolveHiddenState(options.hiddenState ?? -1, config.numHiddenLayers);
    const final = index === config.numHiddenLayers;
    const lookup = options.embedding ?? "gpu";
    if (lookup !== "gpu" && lookup !== "host") {
      throw new Error(`qwen3 encoder: embedding must be "gpu" or "host", got ${JSON.stringify(lookup)}`);
    }
    const weights = await loadQwen3Weights(gpu, checkpoint, config, {
      format: options.format,
      layers: final ? config.numHiddenLayers : index,
      norm: final,
      embedding: lookup === "gpu",
      onProgress: options.onProgress,
    });
    const hostTable = lookup === "host" ? { store: checkpoint.model, name: "embed_tokens.weight" } : null;
    return new Qwen3Encoder(gpu, weights, index, hostTable);
  }

  /** Bytes of the encoder's weights on the GPU. */
  get weightBytes(): number {
    return qwen3WeightBytes(this.#weights);
  }

  /**
   * Host copies of the weights (read back once), whose `restore` makes this encoder again on a device
   * by uploads alone, with no checkpoint read or quantization: what a pipeline keeps of an encoder it
   * frees to make room for its next stage.
   *
   * @returns the copy; `restore(gpu)` gives a new encoder (the same weights, format and hidden state)
   * @throws Error after destroy()
   */
  async hostCopy(): Promise<HostCopy<Qwen3Encoder>> {
    if (this.#destroyed) throw new Error("qwen3 encoder: used after destroy()");
    const hiddenState = this.hiddenState, hostTable = this.#hostTable;
    return await copyToHost(this.#gpu, this.#weights, (w, gpu) => new Qwen3Encoder(gpu, w, hiddenState, hostTable));
  }

  /** Bytes of the programs built so far (activations and inputs, one set per prompt length). */
  get programBytes(): number {
    return [...this.#programs.values()].reduce((s, p) => s + p.work.bytes, 0);
  }

  #checkIds(ids: ArrayLike<number>): void {
    if (this.#destroyed) throw new Error("qwen3 encoder: used after destroy()");
    checkIds("qwen3 encoder", ids);
    if (ids.length < 1) throw new Error("qwen3 encoder: ids must hold at least one token");
    const V = this.config.vocabSize;
    for (let i = 0; i < ids.length; i++) {
      if (!Number.isInteger(ids[i]) || ids[i] < 0 || ids[i] >= V) {
        throw new Error(`qwen3 encoder: ids[${i}] = ${ids[i]} is not a token id in [0, ${V})`);
      }
    }
  }

  #build(L: number): LengthProgram {
    const gpu = this.#gpu, config = this.config, w = this.#weights;
    const work = new Workspace(gpu);
    try {
      const index = w.embedding ? work.alloc("i32", L, "token ids") : null;
      const positions = work.upload(Int32Array.from({ length: L }, (_, t) => t), "positions");
      const buf = layerBuffers(work, config, L);
      const attn = sequenceAttentionBuffers(work, config, L);
      const steps: Step[] = w.embedding ? embeddingSteps(gpu, w.embedding, L, index!, buf.x) : [];
      for (const [i, layer] of w.layers.entries()) {
        steps.push(
          ...layerSteps(
            gpu,
            config,
            layer,
            i,
            buf,
            positions,
            this.#rope,
            (_, qkv, o) => sequenceAttentionSteps(gpu, config, L, qkv, o, attn),
          ),
        );
      }
      let out = buf.x;
      if (w.norm) {
        out = work.alloc("f32", L * config.hiddenSize, "last_hidden_state");
        const norm = rmsnormPlan(gpu, { rows: L, cols: config.hiddenSize, groups: 1, eps: config.rmsNormEps });
        steps.push([norm, [buf.x, w.norm, out]]);
      }
      const program = gpu.program(`qwen3 encoder, ${L} tokens, hidden_states[${this.hiddenState}]`, steps);
      return { program, work, index, input: buf.x, out };
    } catch (e) {
      work.destroy();
      throw e;
    }
  }

  /**
   * Encodes one prompt and leaves the result on the GPU.
   *
   * @param ids token ids, each in `[0, vocab)`
   * @returns the hidden states `[L, hidden]` f32: a tensor of the encoder's, overwritten by the next
   *   call for the same length and freed by {@link release} or {@link destroy} (copy it to keep it)
   * @throws Error naming a bad id, before any GPU work
   */
  async encodeResident(ids: ArrayLike<number>): Promise<GpuTensor> {
    const p = await this.#prepare(ids);
    await p.program.run();
    return p.out;
  }

  /**
   * The program that encodes `ids`, its inputs written, ready to run or to time (what
   * {@link encodeResident} runs); it writes the hidden states to the tensor `encodeResident` returns.
   *
   * @param ids token ids, each in `[0, vocab)`
   * @returns the program for this length (the encoder's: {@link release} or {@link destroy} frees it)
   * @throws Error naming a bad id, before any GPU work
   */
  async prepare(ids: ArrayLike<number>): Promise<Program> {
    return (await this.#prepare(ids)).program;
  }

  async #prepare(ids: ArrayLike<number>): Promise<LengthProgram> {
    this.#checkIds(ids);
    const L = ids.length;
    let p = this.#programs.get(L);
    if (!p) this.#programs.set(L, p = this.#build(L));
    const queue = this.#gpu.device.queue;
    if (this.#hostTable) {
      const { store, name } = this.#hostTable;
      queue.writeBuffer(p.input.buffer, 0, await hostEmbeddingRows(store, name, ids));
    } else queue.writeBuffer(p.index!.buffer, 0, Int32Array.from(ids));
    return p;
  }

  /**
   * Encodes one prompt and reads the result back.
   *
   * @param ids token ids, each in `[0, vocab)`
   * @returns the hidden states `[L, hidden]`, row-major
   * @throws Error naming a bad id, before any GPU work
   */
  async encode(ids: ArrayLike<number>): Promise<Float32Array> {
    return await this.#gpu.read(await this.encodeResident(ids)) as Float32Array;
  }

  /**
   * Frees the program (and its activations) of one prompt length, or of every length.
   *
   * @param length the prompt length; all when absent
   */
  release(length?: number): void {
    for (const [L, p] of this.#programs) {
      if (length !== undefined && L !== length) continue;
      p.program.destroy();
      p.work.destroy();
      this.#programs.delete(L);
    }
  }

  /** Frees everything the encoder holds on the GPU (the device is the caller's). */
  destroy(): void {
    if (this.#destroyed) return;
    this.release();
    this.#constants.destroy();
    destroyQwen3Weights(this.#weights);
    this.#destroyed = true;
  }
}
