/**
 * Anima text-to-image: prompt → Qwen3 states and T5 ids → LLM adapter → context rows → the DiT's
 * flow sampler (Euler, ComfyUI's res_multistep or er_sde) with classifier-free guidance → Wan 2.1
 * VAE decoder → RGB.
 *
 * - Both CFG passes are one batched DiT run: a batch of two through the same program, the latent
 *   gathered once per item, the contexts `[cond, uncond]` stacked; guidance and the sampler's step
 *   are products of the two velocities (and, for res_multistep and er_sde, of the previous steps'
 *   denoised latents) with per-step coefficients (sampler.ts, sampler_update.ts) on the device, so a
 *   step is one program run and small host writes (the σ sinusoid, the coefficients; er_sde's step
 *   noise). Euler's step is one product added into the latent. cfg = 1 runs a batch of one and no
 *   negative prompt.
 * - Samplers (`sampler`): `euler` (default; sd-scripts' and diffusers' sampler), `res_multistep`
 *   (second order, deterministic) and `er_sde` (stochastic), both as ComfyUI defines them for Anima
 *   (sampler.ts). er_sde's noise at step i is elements `[(i + 1) n, (i + 2) n)` of the seed's
 *   models/noise.ts sequence (n the latent's length; the initial latent is elements `[0, n)`):
 *   reproducible from the seed here, never torch's `randn`, so never ComfyUI's image for that seed.
 * - The empty prompt as ComfyUI: Qwen3 tokenises "" to no tokens, and ComfyUI pads that to one
 *   `<|endoftext|>` (151643); T5 gives `</s>` alone. (diffusers instead feeds one id-0 Qwen row
 *   with mask 0; sd-scripts pads to 512 with masks.) The defaults (50 steps, cfg 3.5, negative
 *   prompt "") are sd-scripts' `anima_minimal_inference.py`'s; its flow shift defaults to 5,
 *   diffusers' and ComfyUI's Anima schedules use 3, as this port does unless `shift` says otherwise.
 * - Residency: when the adapter, the DiT and the VAE fit `maxResidentBytes` together they load once
 *   and stay; otherwise each stage loads, runs and is released in turn. A DiT larger than the budget
 *   streams its blocks: they are prepared once into host memory and written in turn into two
 *   resident slots during each forward. A stage that does not fit even so is refused before any of
 *   it is read. Stages loaded in turn keep a host copy of their weights as they are on the GPU from
 *   their first load (`keepHostCopies`, default true; models/loading.ts StageCopies): later images upload
 *   them again, with no checkpoint read or quantization.
 *
 * @module
 */

import { acquireDevice, type ResidentDevice } from "../../harness/device.ts";
import { StageCopies } from "../loading.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { decodedToRgba } from "../image.ts";
import { gaussianNoise } from "../noise.ts";
import { LlmAdapter } from "./adapter.ts";
import {
  adapterConfigFromStore,
  type DitConfig,
  ditConfigFromStore,
  PIXEL_UNIT,
  VAE_SCALE,
  vaeConfigFromStore,
} from "./config.ts";
import { AnimaDit } from "./dit.ts";
import { Graph } from "./graph.ts";
import { ANIMA_SAMPLERS, type AnimaSampler, DEFAULT_SHIFT, samplerSteps, sigmaSchedule } from "./sampler.ts";
import { appendSamplerUpdate, type SamplerUpdate } from "./sampler_update.ts";
import { timestepSinusoid } from "./timestep.ts";
import { AnimaVae } from "./vae.ts";
import {
  adapterLayout,
  checkAdapterLayout,
  checkDitLayout,
  checkVaeLayout,
  ditLayout,
  ditStores,
  vaeLayout,
} from "./weights.ts";

/** Qwen3's `<|endoftext|>`, what ComfyUI encodes for an empty prompt. */
export const QWEN_ENDOFTEXT = 151643;
/** T5's `</s>`, the whole of an empty prompt's T5 ids. */
export const T5_EOS = 1;
/** The default residency budget, 4 GiB. */
export const DEFAULT_MAX_RESIDENT_BYTES = 4 * 1024 ** 3;
/** The DiT's weight formats ({@link AnimaLoadOptions.format}). */
export const ANIMA_FORMATS: readonly ("f32" | "q8")[] = ["f32", "q8"];

/** The Qwen3-0.6B encoder, as the pipeline uses it. */
export interface AnimaTextEncoder {
  /**
   * Qwen3 token ids of a prompt: the plain tokenizer, no BOS/EOS, no chat template.
   *
   * @param text the prompt
   */
  tokenize(text: string): ArrayLike<number>;
  /**
   * The final hidden states (after the last RMSNorm) of the ids, `[ids.length, hidden]`.
   *
   * @param ids the token ids
   */
  encode(ids: Int32Array): Promise<Float32Array>;
  /**
   * Called by {@link Anima.generate} once a generation's prompts are encoded, before the DiT loads:
   * an encoder that loads itself on demand frees its weights here (the text stage of the residency
   * order text encoder, DiT, VAE).
   */
  release?(): void;
}

/** The T5 tokenizer (SentencePiece unigram), as the pipeline uses it. */
export interface AnimaT5Tokenizer {
  /**
   * T5 ids of a prompt, ending in `</s>` (id 1), as `T5TokenizerFast(text)` gives them.
   *
   * @param text the prompt
   */
  encode(text: string): ArrayLike<number>;
}

/** Where an Anima model's parts come from. */
export interface AnimaSource {
  /** The DiT checkpoint with its LLM adapter (ComfyUI names `net.*`). */
  dit: TensorStore;
  /** The Wan 2.1 VAE (`qwen_image_vae.safetensors` names); its encoder half is not read. */
  vae: TensorStore;
  /** Prompt → Qwen3 states. */
  textEncoder: AnimaTextEncoder;
  /** Prompt → T5 ids. */
  t5Tokenizer: AnimaT5Tokenizer;
}

/** Loading progress. */
export interface AnimaProgress {
  /** The stage being loaded. */
  stage: "adapter" | "dit" | "vae";
  /** Units done (DiT: blocks). */
  done: number;
  /** Units in all. */
  total: number;
}

/** Options of {@link Anima.load}. */
export interface AnimaLoadOptions {
  /** The device (created when absent). */
  device?: ResidentDevice;
  /**
   * DiT weight format: `f32` (default), or `q8` (the blocks' projections and MLPs as int8 codes
   * with a scale per row, quantised on the GPU while loading: the 28-block DiT in 2.6 GB instead of
   * 8.4). The adapter and the VAE are f32.
   */
  format?: "f32" | "q8";
  /** Bytes of weights the model may keep on the device at once (default 4 GiB). */
  maxResidentBytes?: number;
  /**
   * When stages load in turn: keep each stage's weights in host memory, as they are on the GPU, from
   * its first load, so later images upload them instead of reading and converting the checkpoint
   * again (default true). Host memory: the stages' weight bytes (52 blocks in q8: 3.9 GB).
   */
  keepHostCopies?: boolean;
  /** Loading progress. */
  onProgress?: (progress: AnimaProgress) => void;
}

/** Options of {@link Anima.generate}. */
export interface AnimaGenerateOptions {
  /** The prompt. */
  prompt: string;
  /** The negative prompt (default ""); unused when cfg = 1. */
  negativePrompt?: string;
  /** Image width in pixels (a multiple of {@link PIXEL_UNIT}, 16). */
  width: number;
  /** Image height in pixels (a multiple of {@link PIXEL_UNIT}, 16). */
  height: number;
  /** Sampling steps, an integer >= 1 (default 50). */
  steps?: number;
  /** Guidance scale, finite (default 3.5; 1 runs no unconditional pass). */
  cfg?: number;
  /** Flow shift of the σ schedule, finite and > 0 (default 3). */
  shift?: number;
  /**
   * Seed of the initial noise, models/noise.ts's seeded Gaussian (an integer in [0, 2^32); default
   * random, returned with the image), and of er_sde's step noise (after the initial latent's values
   * in the same sequence). Torch's `randn` is not reproduced: the same seed gives the same image
   * here, not the image sd-scripts or ComfyUI make from it.
   */
  seed?: number;
  /**
   * The initial latent `[16, height / 8, width / 8]` (N(0, 1) noise), instead of a seed (er_sde still
   * takes its step noise from `seed`, random when absent).
   */
  noise?: Float32Array;
  /**
   * The sampler (default `euler`): `euler`, or ComfyUI's `res_multistep` or `er_sde`
   * ({@link ANIMA_SAMPLERS}; sampler.ts defines each).
   */
  sampler?: AnimaSampler;
  /** Aborts between steps. */
  signal?: AbortSignal;
  /** Called after each denoising step has finished on the GPU, with (steps done, steps). */
  onStep?: (done: number, total: number) => void;
}

/** A generated image. */
export interface AnimaImage {
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
  /** RGB planes `[3, height, width]`, clamped to [−1, 1]; display as (x + 1) / 2. */
  rgb: Float32Array;
  /** The same as RGBA bytes, row-major (models/image.ts's conversion: `(x + 1) / 2 · 255`, rounded). */
  rgba: Uint8ClampedArray;
  /** The final latent `[16, height / 8, width / 8]` (normalised latent space). */
  latent: Float32Array;
  /** The noise's seed (absent when `noise` was given, unless er_sde took its step noise from it). */
  seed?: number;
}

/** The stages' weights on the GPU, by the key of their host copies. */
interface Stages {
  adapter: LlmAdapter;
  dit: AnimaDit;
  vae: AnimaVae;
}

/** The DiT's tensors that `q8` holds as int8 codes: the blocks' projections and MLPs. */
const Q8_TENSOR = /^blocks\.\d+\.((self|cross)_attn\.(q|k|v|output)_proj|mlp\.layer[12])\.weight$/;

/**
 * Bytes of a layout on the device: f32, a 5-D conv weight keeping one temporal tap of its kt, and
 * under `q8` the matching `[N, K]` weights as `N · ceil(K / 4)` words plus N scales.
 */
function bytesOf(layout: { name: string; shape: readonly number[] }[], format: "f32" | "q8" = "f32"): number {
  return layout.reduce((s, { name, shape }) => {
    if (format === "q8" && Q8_TENSOR.test(name)) return s + 4 * shape[0] * (Math.ceil(shape[1] / 4) + 1);
    return s + 4 * shape.reduce((p, d) => p * d, 1) / (shape.length === 5 ? shape[2] : 1);
  }, 0);
}

/**
 * Refuses an unknown sampler, and for er_sde a missing or bad seed or more steps than its noise
 * sequence holds (models/noise.ts's 2^32 values: the initial latent and one latent per step).
 */
function checkSampler(sampler: unknown, steps: number, latentLength: number, seed: number | undefined): void {
  if (!ANIMA_SAMPLERS.includes(sampler as AnimaSampler)) {
    throw new Error(`anima: sampler must be one of ${ANIMA_SAMPLERS.join(", ")}, got ${String(sampler)}`);
  }
  if (sampler !== "er_sde") return;
  if (seed === undefined || !Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32) {
    throw new Error(`anima: seed must be an integer in [0, 2^32) for sampler "er_sde" (its step noise), got ${seed}`);
  }
  if ((steps + 1) * latentLength > 2 ** 32) {
    throw new Error(
      `anima: steps must be at most ${Math.floor(2 ** 32 / latentLength) - 1} for er_sde at this size (its noise ` +
        `sequence holds 2^32 values, ${latentLength} per step), got ${steps}`,
    );
  }
}

/**
 * Anima, loaded: see the module doc.
 *
 * @example Tiny random weights (the oracle's golden set) and a stand-in text side
 * ```ts
 * import { Anima } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const anima = await Anima.load({
 *   dit: await open("weights_dit"), // in practice Anima's DiT file (ComfyUI names)
 *   vae: await open("weights_vae"), // in practice qwen_image_vae.safetensors
 *   // In practice models/qwen3's encoder and llm/tokenizer's Qwen BPE and T5 unigram tokenizers.
 *   textEncoder: {
 *     tokenize: (text) => [...text].map((c) => c.charCodeAt(0) % 128),
 *     encode: (ids) => Promise.resolve(new Float32Array(ids.length * 40)),
 *   },
 *   t5Tokenizer: { encode: () => [5, 6, 1] },
 * });
 * const image = await anima.generate({ prompt: "a cat", width: 32, height: 32, steps: 2, seed: 7 });
 * console.log(image.rgba.length); // 32 * 32 * 4 bytes (image.rgb: the [3, 32, 32] floats in [-1, 1])
 * anima.destroy();
 * ```
 */
export class Anima {
  /** The DiT's sizes. */
  readonly config: DitConfig;
  readonly #gpu: ResidentDevice;
  readonly #owned: boolean;
  readonly #source: AnimaSource;
  readonly #stores: { dit: TensorStore; adapter: TensorStore };
  readonly #budget: number;
  readonly #keep: boolean;
  readonly #format: "f32" | "q8";
  readonly #stream: boolean;
  readonly #onProgress?: (progress: AnimaProgress) => void;
  #adapter?: LlmAdapter;
  #dit?: AnimaDit;
  #vae?: AnimaVae;
  /** Stages' weights in host memory, when they load in turn ({@link AnimaLoadOptions.keepHostCopies}). */
  readonly #copies: StageCopies<Stages>;

  private constructor(
    gpu: ResidentDevice,
    owned: boolean,
    source: AnimaSource,
    config: DitConfig,
    budget: { bytes: number; keep: boolean; format: "f32" | "q8"; stream: boolean; hostCopies: boolean },
    onProgress?: (progress: AnimaProgress) => void,
  ) {
    this.#gpu = gpu;
    this.#owned = owned;
    this.#source = source;
    this.#stores = ditStores(source.dit);
    this.config = config;
    this.#budget = budget.bytes;
    this.#keep = budget.keep;
    this.#format = budget.format;
    this.#stream = budget.stream;
    this.#copies = new StageCopies(!budget.keep && budget.hostCopies);
    this.#onProgress = onProgress;
  }

  /**
   * Checks every checkpoint's layout (no data read) and, when the stages fit the residency budget
   * together, loads them.
   *
   * @param source the checkpoints, the text encoder and the T5 tokenizer
   * @param options device, format, residency budget, progress
   * @returns the model
   * @throws Error naming a missing or mis-shaped tensor, a format other than f32 or q8, or a stage larger
   *   than `maxResidentBytes`
   */
  static async load(source: AnimaSource, options: AnimaLoadOptions = {}): Promise<Anima> {
    const format = options.format ?? "f32";
    if (!ANIMA_FORMATS.includes(format)) {
      throw new Error(`anima: format must be "f32" or "q8", got ${String(format)}`);
    }
    const budget = options.maxResidentBytes ?? DEFAULT_MAX_RESIDENT_BYTES;
    if (!(budget > 0)) throw new Error(`anima: maxResidentBytes must be > 0, got ${budget}`);
    const { dit, adapter } = ditStores(source.dit);
    const ditConfig = ditConfigFromStore(dit);
    checkDitLayout(dit, ditConfig);
    const adapterConfig = adapterConfigFromStore(adapter);
    checkAdapterLayout(adapter, adapterConfig);
    const vaeConfig = vaeConfigFromStore(source.vae);
    checkVaeLayout(source.vae, vaeConfig);
    const layout = ditLayout(ditConfig);
    const blockBytes = bytesOf(layout.filter((t) => t.name.startsWith("blocks.0.")), format);
    const ditAll = bytesOf(layout, format);
    // Streamed, the blocks' weights on the device are two slots.
    const ditStreamed = ditAll - (ditConfig.blocks - Math.min(2, ditConfig.blocks)) * blockBytes;
    const stream = ditAll > budget;
    const stages = {
      adapter: bytesOf(adapterLayout(adapterConfig)),
      dit: stream ? ditStreamed : ditAll,
      vae: bytesOf(vaeLayout(vaeConfig)),
    };
    for (const [stage, bytes] of Object.entries(stages)) {
      if (bytes > budget) {
        throw new Error(
          `anima: the ${stage} needs ${bytes} bytes resident${stage === "dit" ? " with its blocks streamed" : ""}, ` +
            `over maxResidentBytes ${budget}`,
        );
      }
    }
    const keep = stages.adapter + stages.dit + stages.vae <= budget;
    const owned = options.device === undefined;
    const gpu = options.device ?? await acquireDevice();
    const hostCopies = options.keepHostCopies ?? true;
    const model = new Anima(
      gpu,
      owned,
      source,
      ditConfig,
      { bytes: budget, keep, format, stream, hostCopies },
      options.onProgress,
    );
    if (keep) {
      try {
        await model.#loadAdapter();
        await model.#loadDit();
        await model.#loadVae();
      } catch (e) {
        model.destroy(); // the stages loaded before the one that failed, and a device of its own
        throw e;
      }
    }
    return model;
  }

  /** The residency budget in bytes, and whether every stage stays loaded. */
  get residency(): { maxResidentBytes: number; keepsAllStages: boolean; streamsDitBlocks: boolean } {
    return { maxResidentBytes: this.#budget, keepsAllStages: this.#keep, streamsDitBlocks: this.#stream };
  }

  /**
   * Bytes of the stages' host copies ({@link AnimaLoadOptions.keepHostCopies}); a streamed DiT's host
   * blocks, which its copy shares, are not counted.
   */
  get hostBytes(): number {
    return this.#copies.bytes;
  }

  /** A stage from its host copy (uploads only, reported as one unit), or loaded from its checkpoint. */
  #stage<K extends keyof Stages>(stage: K, load: () => Promise<Stages[K]>): Promise<Stages[K]> {
    return this.#copies.stage(stage, load, () => this.#onProgress?.({ stage, done: 1, total: 1 }));
  }

  async #loadAdapter(): Promise<LlmAdapter> {
    this.#adapter ??= await this.#stage("adapter", async () => {
      this.#onProgress?.({ stage: "adapter", done: 0, total: 1 });
      const adapter = await LlmAdapter.load(this.#gpu, this.#stores.adapter);
      this.#onProgress?.({ stage: "adapter", done: 1, total: 1 });
      return adapter;
    });
    return this.#adapter;
  }

  async #loadDit(): Promise<AnimaDit> {
    this.#dit ??= await this.#stage("dit", () =>
      AnimaDit.load(this.#gpu, this.#stores.dit, {
        format: this.#format,
        stream: this.#stream,
        onProgress: (done, total) => this.#onProgress?.({ stage: "dit", done, total }),
      }));
    return this.#dit;
  }

  async #loadVae(): Promise<AnimaVae> {
    this.#vae ??= await this.#stage("vae", async () => {
      this.#onProgress?.({ stage: "vae", done: 0, total: 1 });
      const vae = await AnimaVae.load(this.#gpu, this.#source.vae);
      this.#onProgress?.({ stage: "vae", done: 1, total: 1 });
      return vae;
    });
    return this.#vae;
  }

  /** Releases a stage unless every stage stays loaded. */
  #release(stage: "adapter" | "dit" | "vae"): void {
    if (this.#keep) return;
    if (stage === "adapter") this.#adapter?.destroy(), this.#adapter = undefined;
    if (stage === "dit") this.#dit?.destroy(), this.#dit = undefined;
    if (stage === "vae") this.#vae?.destroy(), this.#vae = undefined;
  }

  /**
   * Qwen3 states and T5 ids of a prompt, the empty prompt as ComfyUI encodes it.
   *
   * @param text the prompt
   * @returns the Qwen3 states `[L, hidden]` and the T5 ids
   */
  async encodePrompt(text: string): Promise<{ states: Float32Array; t5Ids: Int32Array }> {
    const { qwenIds, t5Ids } = this.#tokenize(text);
    return { states: await this.#source.textEncoder.encode(qwenIds), t5Ids };
  }

  /** A prompt's Qwen3 and T5 ids, the empty prompt's as ComfyUI's. */
  #tokenize(text: string): { qwenIds: Int32Array; t5Ids: Int32Array } {
    const qwen = Int32Array.from(this.#source.textEncoder.tokenize(text));
    const t5 = Int32Array.from(this.#source.t5Tokenizer.encode(text));
    return {
      qwenIds: qwen.length > 0 ? qwen : Int32Array.of(QWEN_ENDOFTEXT),
      t5Ids: t5.length > 0 ? t5 : Int32Array.of(T5_EOS),
    };
  }

  /**
   * The DiT's context rows for prompts already encoded: the adapter's rows, zero-padded to 512,
   * one block of `[512, contextDim]` per prompt.
   *
   * @param prompts Qwen3 states and T5 ids per prompt
   * @returns `[prompts.length, 512, contextDim]`
   * @throws Error when a prompt has more than 512 T5 ids
   */
  async context(prompts: { states: Float32Array; t5Ids: Int32Array }[]): Promise<Float32Array> {
    const { contextRows, contextDim } = this.config;
    for (const p of prompts) {
      if (p.t5Ids.length > contextRows) {
        throw new Error(`anima: a prompt of ${p.t5Ids.length} T5 tokens is over the DiT's ${contextRows} context rows`);
      }
    }
    const adapter = await this.#loadAdapter();
    const out = new Float32Array(prompts.length * contextRows * contextDim);
    try {
      for (const [i, p] of prompts.entries()) {
        out.set(await adapter.run(p.states, p.t5Ids), i * contextRows * contextDim);
      }
    } finally {
      this.#release("adapter");
    }
    return out;
  }

  /**
   * Denoises a latent: `steps` steps of the flow sampler, both CFG passes in one batched DiT run per
   * step (one pass when `cfg` = 1).
   *
   * @param noise the initial latent `[16, h, w]`
   * @param context `[batch, 512, contextDim]`: cond, then (cfg ≠ 1) uncond
   * @param h latent height
   * @param w latent width
   * @param options steps, cfg, shift, sampler, seed (er_sde's step noise: required for it), signal, onStep
   * @returns the final latent
   * @throws Error naming `sampler` when it is unknown, `seed` when er_sde has none
   */
  async denoise(
    noise: Float32Array,
    context: Float32Array,
    h: number,
    w: number,
    options: Pick<AnimaGenerateOptions, "steps" | "cfg" | "shift" | "sampler" | "seed" | "signal" | "onStep">,
  ): Promise<Float32Array> {
    const steps = options.steps ?? 50, cfg = options.cfg ?? 3.5, sampler = options.sampler ?? "euler";
    const batch = cfg === 1 ? 1 : 2;
    const c = this.config;
    checkSampler(sampler, steps, noise.length, options.seed);
    if (noise.length !== c.channels * h * w) {
      throw new Error(`anima: noise must be [${c.channels}, ${h}, ${w}], got ${noise.length} values`);
    }
    if (context.length !== batch * c.contextRows * c.contextDim) {
      throw new Error(
        `anima: context must be [${batch}, ${c.contextRows}, ${c.contextDim}], got ${context.length} values`,
      );
    }
    const shift = options.shift ?? DEFAULT_SHIFT;
    const plan = samplerSteps(sampler, sigmaSchedule(steps, shift), { shift });
    const dit = await this.#loadDit();
    const gpu = this.#gpu;
    const latent = gpu.upload(noise, "latent");
    const sinusoid = gpu.alloc("f32", c.dim, "sinusoid");
    const ctx = gpu.upload(context, "context");
    const geometry = dit.geometry(h, w, batch);
    const g = new Graph(gpu, `anima DiT ${batch} x ${h} x ${w}`);
    let update: SamplerUpdate | undefined;
    try {
      const v = dit.build(g, { batch, height: h, width: w, latent, sinusoid, context: ctx }, geometry);
      update = appendSamplerUpdate(g, { sampler, cfg, batch, latent, velocity: v });
      const program = dit.runner(g);
      try {
        for (let i = 0; i < steps; i++) {
          options.signal?.throwIfAborted();
          const step = plan[i];
          gpu.device.queue.writeBuffer(
            sinusoid.buffer,
            0,
            timestepSinusoid(step.sigma, c.dim) as Float32Array<ArrayBuffer>,
          );
          // er_sde's noise of step i: the seed's sequence after the initial latent and the earlier steps'.
          const n = noise.length;
          update.write(step, step.noise !== 0 ? gaussianNoise(options.seed!, n, (i + 1) * n) : undefined);
          await program.run();
          // The step's work done, not only submitted: progress is true, and an abort stops what is not queued.
          await gpu.device.queue.onSubmittedWorkDone();
          options.onStep?.(i + 1, steps);
        }
      } finally {
        program.destroy();
      }
      return await gpu.read(latent) as Float32Array;
    } finally {
      g.destroy();
      update?.destroy();
      for (const t of [latent, sinusoid, ctx, geometry.patchIndex, geometry.positions]) {
        t.buffer.destroy();
      }
      this.#release("dit");
    }
  }

  /**
   * Decodes a latent to RGB with the VAE, clamped to [−1, 1].
   *
   * @param latent `[16, h, w]`
   * @param h latent height
   * @param w latent width
   * @returns `[3, 8h, 8w]`
   */
  async decode(latent: Float32Array, h: number, w: number): Promise<Float32Array> {
    const vae = await this.#loadVae();
    try {
      return await vae.run(latent, h, w);
    } finally {
      this.#release("vae");
    }
  }

  /**
   * Generates an image (see the module doc for what each stage does).
   *
   * @param options prompt, size, steps, guidance, noise, progress
   * @returns the image and its final latent
   * @throws Error naming a bad option, before any GPU work
   */
  async generate(options: AnimaGenerateOptions): Promise<AnimaImage> {
    // Every option is checked here, before the prompts are encoded (which may load the text encoder).
    const { width, height } = options;
    for (const [name, v] of [["width", width], ["height", height]] as const) {
      if (!Number.isInteger(v) || v < PIXEL_UNIT || v % PIXEL_UNIT !== 0) {
        throw new Error(`anima: ${name} must be a multiple of ${PIXEL_UNIT}, got ${v}`);
      }
    }
    for (const [name, v] of [["prompt", options.prompt], ["negativePrompt", options.negativePrompt ?? ""]]) {
      if (typeof v !== "string") throw new Error(`anima: ${name} must be a string, got ${typeof v}`);
    }
    const steps = options.steps ?? 50, cfg = options.cfg ?? 3.5, shift = options.shift ?? DEFAULT_SHIFT;
    if (!Number.isInteger(steps) || steps < 1) throw new Error(`anima: steps must be an integer >= 1, got ${steps}`);
    if (!Number.isFinite(cfg)) throw new Error(`anima: cfg must be finite, got ${cfg}`);
    if (!(Number.isFinite(shift) && shift > 0)) {
      throw new Error(`anima: shift must be a finite number > 0, got ${shift}`);
    }
    const sampler = options.sampler ?? "euler";
    const h = height / VAE_SCALE, w = width / VAE_SCALE, latentLength = this.config.channels * h * w;
    if (
      options.noise !== undefined && !(options.noise instanceof Float32Array && options.noise.length === latentLength)
    ) {
      throw new Error(
        `anima: noise must be a Float32Array of [${this.config.channels}, ${h}, ${w}] (${latentLength} values), got ` +
          `${options.noise instanceof Float32Array ? `${options.noise.length} values` : typeof options.noise}`,
      );
    }
    // er_sde takes its step noise from the seed even when the initial latent is given.
    const seeded = options.noise === undefined || sampler === "er_sde";
    const seed = seeded ? options.seed ?? crypto.getRandomValues(new Uint32Array(1))[0] : undefined;
    checkSampler(sampler, steps, latentLength, seed);
    const noise = options.noise ?? gaussianNoise(seed!, latentLength);
    options.signal?.throwIfAborted();
    // Both prompts tokenized first: one over the context's rows is refused before the text encoder runs.
    const tokens = [options.prompt, ...(cfg !== 1 ? [options.negativePrompt ?? ""] : [])].map((t) => this.#tokenize(t));
    const { contextRows } = this.config;
    for (const [i, { t5Ids }] of tokens.entries()) {
      if (t5Ids.length > contextRows) {
        throw new Error(
          `anima: the ${i === 0 ? "prompt" : "negative prompt"} has ${t5Ids.length} T5 tokens, over the DiT's ` +
            `${contextRows} context rows`,
        );
      }
    }
    const prompts = [];
    for (const { qwenIds, t5Ids } of tokens) {
      prompts.push({ states: await this.#source.textEncoder.encode(qwenIds), t5Ids });
    }
    this.#source.textEncoder.release?.();
    const context = await this.context(prompts);
    const latent = await this.denoise(noise, context, h, w, { ...options, steps, cfg, shift, sampler, seed });
    const rgb = await this.decode(latent, h, w);
    return {
      width,
      height,
      rgb,
      rgba: decodedToRgba(rgb, width, height),
      latent,
      ...(seed === undefined ? {} : { seed }),
    };
  }

  /** Frees every loaded stage, and the device if the model created it. */
  destroy(): void {
    this.#adapter?.destroy();
    this.#dit?.destroy();
    this.#vae?.destroy();
    this.#adapter = this.#dit = this.#vae = undefined;
    this.#copies.clear();
    if (this.#owned) this.#gpu.destroy();
  }
}
