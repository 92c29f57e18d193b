/**
 * Z-Image Turbo text-to-image: prompt → Qwen3's `hidden_states[-2]` of the chat-templated prompt →
 * the Turbo sampler's DiT steps → the VAE decoder → RGBA bytes (upstream's `generate()` with guidance
 * 0, one image).
 *
 * The prompt is wrapped in Qwen3's chat template (`<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>
 * assistant\n`, no think block), tokenized, truncated to 512 tokens (a long prompt loses the
 * template's tail, as upstream's `max_length=512, truncation=True`) and encoded with no padding (the
 * oracle's check: padded and alone agree to 1.4e-6). Caption features may be given instead
 * (`promptEmbeds`), and the starting latent (`noise`) instead of a seed.
 *
 * Residency: the text encoder's layers are held as f32 or q8 (its embedding table stays in the
 * checkpoint: each prompt's rows are read from it and uploaded), the DiT's blocks as f32, q8 or q4g128,
 * everything else as f32. When the three stages' weights fit `maxResidentBytes` (default 4 GiB)
 * together, all stay loaded; otherwise each is loaded when it runs and released after it (text
 * encoder, DiT, VAE), the caption features and the latent passing through host memory, so no two are
 * on the GPU at once. A stage released so keeps a host copy of its weights as they are on the GPU
 * (`keepHostCopies`, default true; models/loading.ts StageCopies), taken at its first load: later images
 * upload it again, with no checkpoint read, conversion or quantization. A DiT that does not fit whole keeps its blocks' projections in host memory and
 * uploads each into one of two resident slots before it runs (its adaLN, norms, embedders and final
 * layer stay resident), every step. A stage that does not fit even so is refused. At Turbo's size: the
 * DiT takes 22.9 GiB (f32), 5.8 (q8) or 3.1 (q4g128), the text encoder 13.2 GiB (f32) or 3.3 (q8; the
 * f32 embedding table it does not hold would add 1.45), the VAE decoder 0.18: with the default budget a
 * q4g128 DiT and the q8 text encoder each fit whole, loaded in turn; a streamed DiT holds two blocks (0.66
 * GiB each in f32, 0.17 in q8) and its adaLN, embedders and final layer: 1.84 GiB in all in f32, 0.50 in q8.
 *
 * @module
 */

import { acquireDevice, type ResidentDevice } from "../../harness/device.ts";
import { StageCopies } from "../loading.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { qwenChatPrompt } from "../../llm/tokenizer/qwen.ts";
import type { Tokenizer } from "../../llm/tokenizer/tokenizer.ts";
import { Qwen3Encoder } from "../qwen3/encoder.ts";
import { QWEN3_FORMATS, type Qwen3Format } from "../qwen3/linear.ts";
import type { Qwen3Config } from "../qwen3/config.ts";
import { decodedToRgba } from "../image.ts";
import { gaussianNoise } from "../noise.ts";
import { CAPTION_HIDDEN_STATE, MAX_CAPTION_TOKENS, pixelUnit, vaeScaleFactor } from "./config.ts";
import { type Activations, checkActivations, LINEAR_FORMATS, linearBytes, type LinearFormat } from "../linear.ts";
import { eulerAlpha, turboSchedule } from "./scheduler.ts";
import { type ModelFiles, openZImage, type ZImageCheckpoint } from "./source.ts";
import { type DitRun, ditWeightBytes, ZImageDit } from "./transformer/dit.ts";
import { VaeDecoder } from "./vae/decoder.ts";

/** The default residency budget: 4 GiB. */
export const DEFAULT_MAX_RESIDENT_BYTES = 4 * 2 ** 30;

/** The pipeline's stages, in the order they run. */
export type ZImageStage = "text_encoder" | "dit" | "vae";

/** Progress of loading a stage: its parts done of all (the text encoder counts bytes read). */
export interface LoadProgress {
  /** The stage. */
  stage: ZImageStage;
  /** Parts done. */
  done: number;
  /** Parts in all. */
  total: number;
}

/** Options of {@link ZImage.load}. */
export interface ZImageLoadOptions {
  /** The device (default: `acquireDevice()`, destroyed with the model). */
  device?: ResidentDevice;
  /** The DiT blocks' weight format (default f32); the embedders, final layer and VAE stay f32. */
  format?: LinearFormat;
  /**
   * What the DiT blocks' projections multiply (default `"f32"`): `"int8"` quantizes each input per
   * row and runs the products on integer dot products (q8 and q4g128 only; `ZImageDit.load`'s
   * `activations` says what it changes).
   */
  activations?: Activations;
  /** The text encoder's layers' format (default f32 with an f32 DiT, else q8). */
  textEncoderFormat?: Qwen3Format;
  /** The tokenizer, where the checkpoint has none (ComfyUI's files) or another is wanted. */
  tokenizer?: Tokenizer;
  /** Bytes of weights the GPU may hold at once (default 4 GiB). */
  maxResidentBytes?: number;
  /**
   * When stages load in turn: keep each stage's weights in host memory, as they are on the GPU, from
   * its first load, so later images upload them instead of reading and converting the checkpoint
   * again (default true). Host memory: the stages' weight bytes (q4g128 with the q8 text encoder: 6.6 GiB).
   */
  keepHostCopies?: boolean;
  /** Load progress. */
  onProgress?: (progress: LoadProgress) => void;
}

/** Options of {@link ZImage.generate}. */
export interface GenerateOptions {
  /** The prompt (encoded by the checkpoint's tokenizer and text encoder). */
  prompt?: string;
  /** Caption features `[tokens, capDim]` (Qwen3's `hidden_states[-2]` of the templated prompt), in place of `prompt`. */
  promptEmbeds?: Float32Array;
  /** Pixels, a multiple of the checkpoint's {@link pixelUnit} (Turbo: 16; default 1024). */
  width?: number;
  /** Pixels, a multiple of the checkpoint's {@link pixelUnit} (Turbo: 16; default 1024). */
  height?: number;
  /** Euler steps, in [1, 1000] (default 8, Turbo's). */
  steps?: number;
  /** Seed of the starting noise (models/noise.ts); default a random one. */
  seed?: number;
  /** The starting latent `[16, height/8, width/8]` itself, in place of a seed's noise. */
  noise?: Float32Array;
  /** Aborts between stages and steps. */
  signal?: AbortSignal;
  /** Called after each step has finished on the GPU. */
  onStep?: (progress: { step: number; steps: number }) => void;
  /** Also return the final latent. */
  keepLatent?: boolean;
}

/** A generated image. */
export interface GeneratedImage {
  /** Pixels. */
  width: number;
  /** Pixels. */
  height: number;
  /** RGBA, row-major, `width · height · 4` bytes. */
  data: Uint8ClampedArray;
  /** The seed of the noise (undefined when `noise` was given). */
  seed?: number;
  /** Caption tokens the prompt gave (after the template and truncation), when a prompt was encoded. */
  captionTokens?: number;
  /** The final latent `[16, height/8, width/8]`, when asked for. */
  latent?: Float32Array;
}

/** Which stages stay loaded between generations. */
export interface Residency {
  /** The text encoder. */
  textEncoder: boolean;
  /** The DiT. */
  dit: boolean;
  /** The VAE decoder. */
  vae: boolean;
  /** Whether the DiT's blocks stream from host memory through two resident slots (it does not fit whole). */
  ditStreamed: boolean;
}

function storeBytes(store: TensorStore): number {
  return store.tensors.reduce((n, t) => n + 4 * t.shape.reduce((a, b) => a * b, 1), 0);
}

/**
 * Bytes the text encoder's weights take on the GPU for Z-Image: the layers up to `hidden_states[-2]`
 * (the last layer and the final norm are not loaded, and the embedding's rows are gathered on the host).
 *
 * @param config the encoder's config
 * @param format its layers' format
 * @returns bytes
 *
 * @example
 * ```ts
 * import { QWEN3_4B, textEncoderWeightBytes } from "@xpu/ops/models/zimage";
 * textEncoderWeightBytes(QWEN3_4B, "q8"); // 3537443840: 3.29 GiB, within the default 4 GiB budget
 * textEncoderWeightBytes(QWEN3_4B, "f32"); // 14130314240
 * ```
 */
export function textEncoderWeightBytes(config: Qwen3Config, format: Qwen3Format): number {
  const h = config.hiddenSize, q = config.numAttentionHeads * config.headDim;
  const kv = config.numKeyValueHeads * config.headDim, f = config.intermediateSize;
  const layer = linearBytes(q, h, format) + 2 * linearBytes(kv, h, format) + linearBytes(h, q, format) +
    2 * linearBytes(f, h, format) + linearBytes(h, f, format) + 4 * (2 * h + 2 * config.headDim);
  return (config.numHiddenLayers + 1 + CAPTION_HIDDEN_STATE) * layer;
}

/** The stages' weights on the GPU, by the key of their host copies. */
interface Stages {
  encoder: Qwen3Encoder;
  dit: ZImageDit;
  vae: VaeDecoder;
}

/** Z-Image Turbo on a WebGPU device. */
export class ZImage {
  /** The checkpoint. */
  readonly checkpoint: ZImageCheckpoint;
  /** Which stages stay loaded. */
  readonly resident: Residency;
  readonly #gpu: ResidentDevice;
  readonly #ownsDevice: boolean;
  readonly #options: ZImageLoadOptions;
  readonly #format: LinearFormat;
  readonly #textEncoderFormat: Qwen3Format;
  #encoder?: Qwen3Encoder;
  #dit?: ZImageDit;
  #vae?: VaeDecoder;
  /** Released stages' weights in host memory ({@link ZImageLoadOptions.keepHostCopies}). */
  readonly #copies: StageCopies<Stages>;
  #run?: { key: string; run: DitRun };
  #busy = false;
  #destroyed = false;

  private constructor(
    gpu: ResidentDevice,
    checkpoint: ZImageCheckpoint,
    resident: Residency,
    format: LinearFormat,
    textEncoderFormat: Qwen3Format,
    options: ZImageLoadOptions,
  ) {
    this.#gpu = gpu;
    this.#ownsDevice = !options.device;
    this.checkpoint = checkpoint;
    this.resident = resident;
    this.#format = format;
    this.#textEncoderFormat = textEncoderFormat;
    this.#options = options;
    this.#copies = new StageCopies(!resident.dit && options.keepHostCopies !== false);
  }

  /**
   * Opens a checkpoint (checking every component's tensors first) and loads what the budget keeps.
   *
   * @param source the model's files (diffusers directory or ComfyUI's files), or a checkpoint already opened
   * @param options device, formats, tokenizer, budget, progress
   * @returns the model
   * @throws Error naming a missing file, a tensor that does not fit, an unknown format, or a stage over the budget
   */
  static async load(source: ModelFiles | ZImageCheckpoint, options: ZImageLoadOptions = {}): Promise<ZImage> {
    const format = options.format ?? "f32";
    if (!LINEAR_FORMATS.includes(format)) {
      throw new Error(`ZImage.load: format must be one of ${LINEAR_FORMATS.join(", ")}, got ${String(format)}`);
    }
    checkActivations(options.activations, format, "ZImage.load");
    const teFormat = options.textEncoderFormat ?? (format === "f32" ? "f32" : "q8");
    if (!QWEN3_FORMATS.includes(teFormat)) {
      throw new Error(
        `ZImage.load: textEncoderFormat must be one of ${QWEN3_FORMATS.join(", ")}, got ${String(teFormat)}`,
      );
    }
    const budget = options.maxResidentBytes ?? DEFAULT_MAX_RESIDENT_BYTES;
    if (!(Number.isFinite(budget) && budget > 0)) {
      throw new Error(`ZImage.load: maxResidentBytes must be a number > 0, got ${budget}`);
    }
    const checkpoint = "open" in source ? await openZImage(source) : source;
    const te = checkpoint.textEncoder ? textEncoderWeightBytes(checkpoint.textEncoder.config, teFormat) : 0;
    const vae = storeBytes(checkpoint.vae);
    // The DiT streams its blocks through two slots when it does not fit whole.
    const stream = ditWeightBytes(checkpoint.config.dit, format) > budget;
    const dit = ditWeightBytes(checkpoint.config.dit, format, stream);
    const over = [["text encoder", te], ["DiT", dit], ["VAE decoder", vae]] as const;
    for (const [stage, bytes] of over) {
      if (bytes > budget) {
        throw new Error(
          `ZImage.load: the ${stage} needs ${bytes} bytes of weights${
            stage === "DiT" ? " with its blocks streamed" : ""
          }, ` +
            `over maxResidentBytes ${budget}`,
        );
      }
    }
    const all = te + dit + vae <= budget;
    const resident = { textEncoder: all && te > 0, dit: all, vae: all, ditStreamed: stream };
    const gpu = options.device ?? await acquireDevice();
    const model = new ZImage(gpu, checkpoint, resident, format, teFormat, options);
    try {
      if (resident.textEncoder) await model.#loadEncoder();
      if (resident.dit) await model.#loadDit();
      if (resident.vae) await model.#loadVae();
    } catch (e) {
      model.destroy();
      throw e;
    }
    return model;
  }

  #progress(progress: LoadProgress): void {
    this.#options.onProgress?.(progress);
  }

  /**
   * Bytes of the stages' host copies ({@link ZImageLoadOptions.keepHostCopies}); a streamed DiT's
   * host blocks, which its copy shares, are not counted.
   */
  get hostBytes(): number {
    return this.#copies.bytes;
  }

  async #loadEncoder(): Promise<Qwen3Encoder> {
    const te = this.checkpoint.textEncoder;
    if (!te) throw new Error("ZImage: the checkpoint has no text encoder: pass promptEmbeds");
    this.#encoder ??= await this.#copies.stage(
      "encoder",
      () =>
        Qwen3Encoder.load(this.#gpu, te.store, te.config, {
          format: this.#textEncoderFormat,
          hiddenState: CAPTION_HIDDEN_STATE,
          embedding: "host",
          onProgress: (done, total) => this.#progress({ stage: "text_encoder", done, total }),
        }),
      () => this.#progress({ stage: "text_encoder", done: 1, total: 1 }),
    );
    return this.#encoder;
  }

  async #loadDit(): Promise<ZImageDit> {
    const { dit, config } = this.checkpoint;
    this.#dit ??= await this.#copies.stage(
      "dit",
      () =>
        ZImageDit.load(this.#gpu, dit, config.dit, {
          format: this.#format,
          activations: this.#options.activations,
          stream: this.resident.ditStreamed,
          onProgress: (done, total) => this.#progress({ stage: "dit", done, total }),
        }),
      () => this.#progress({ stage: "dit", done: 1, total: 1 }),
    );
    return this.#dit;
  }

  async #loadVae(): Promise<VaeDecoder> {
    this.#vae ??= await this.#copies.stage("vae", async () => {
      const vae = await VaeDecoder.load(this.#gpu, this.checkpoint.vae, this.checkpoint.config.vae);
      this.#progress({ stage: "vae", done: 1, total: 1 });
      return vae;
    }, () => this.#progress({ stage: "vae", done: 1, total: 1 }));
    return this.#vae;
  }

  /**
   * The token ids Z-Image encodes for a prompt: the chat template, tokenized, at most 512.
   *
   * @param prompt the prompt
   * @returns the ids
   * @throws Error when there is no tokenizer
   */
  captionIds(prompt: string): number[] {
    const tokenizer = this.#options.tokenizer ?? this.checkpoint.tokenizer;
    if (!tokenizer) {
      throw new Error("ZImage: no tokenizer (the checkpoint has no tokenizer/ and none was given): pass promptEmbeds");
    }
    return tokenizer.encode(qwenChatPrompt(prompt)).slice(0, MAX_CAPTION_TOKENS);
  }

  /**
   * Generates one image.
   *
   * @param options prompt (or caption features), size, steps, seed (or noise), abort signal, progress
   * @returns the image's RGBA bytes
   * @throws Error naming a bad option; the signal's reason when aborted; an error when another
   *   generation is running or the model was destroyed
   */
  async generate(options: GenerateOptions): Promise<GeneratedImage> {
    if (this.#destroyed) throw new Error("ZImage.generate: the model was destroyed");
    if (this.#busy) throw new Error("ZImage.generate: another generation is running (one at a time)");
    this.#busy = true;
    try {
      return await this.#generate(options);
    } finally {
      this.#busy = false;
    }
  }

  async #generate(options: GenerateOptions): Promise<GeneratedImage> {
    const gpu = this.#gpu, { dit: ditConfig, vae: vaeConfig } = this.checkpoint.config;
    const { width = 1024, height = 1024, steps = 8 } = options;
    const scale = vaeScaleFactor(vaeConfig), unit = pixelUnit(this.checkpoint.config);
    for (const [name, v] of [["width", width], ["height", height]] as const) {
      if (!Number.isInteger(v) || v < unit || v % unit !== 0) {
        throw new Error(`ZImage.generate: ${name} must be a positive multiple of ${unit}, got ${v}`);
      }
    }
    const h = height / scale, w = width / scale, latentLength = ditConfig.inChannels * h * w;
    if (options.promptEmbeds !== undefined) {
      const cap = options.promptEmbeds;
      if (!(cap instanceof Float32Array) || cap.length === 0 || cap.length % ditConfig.capFeatDim !== 0) {
        throw new Error(
          `ZImage.generate: promptEmbeds must be a Float32Array of [tokens >= 1, ${ditConfig.capFeatDim}]`,
        );
      }
    } else if (typeof options.prompt !== "string") {
      throw new Error("ZImage.generate: give a prompt (a string) or promptEmbeds");
    }
    let seed: number | undefined;
    let noise = options.noise;
    if (noise) {
      if (!(noise instanceof Float32Array) || noise.length !== latentLength) {
        throw new Error(`ZImage.generate: noise must be a Float32Array of 16 x ${h} x ${w}, got ${noise?.length}`);
      }
    } else {
      seed = options.seed ?? crypto.getRandomValues(new Uint32Array(1))[0];
      noise = gaussianNoise(seed, latentLength);
    }
    const schedule = turboSchedule(steps);
    options.signal?.throwIfAborted();

    // Caption features.
    let cap = options.promptEmbeds, captionTokens: number | undefined;
    if (!cap) {
      const ids = this.captionIds(options.prompt!);
      captionTokens = ids.length;
      const encoder = await this.#loadEncoder();
      cap = await encoder.encode(ids);
      if (this.resident.textEncoder) encoder.release(ids.length);
      else this.#releaseEncoder();
      options.signal?.throwIfAborted();
    }

    // The DiT's steps.
    const dit = await this.#loadDit();
    const capLen = cap.length / ditConfig.capFeatDim, key = `${h}x${w}:${capLen}`;
    if (this.#run?.key !== key) {
      this.#run?.run.destroy();
      this.#run = { key, run: dit.prepare({ latentH: h, latentW: w, capLen }) };
    }
    const run = this.#run.run;
    gpu.device.queue.writeBuffer(run.capFeats.buffer, 0, cap as Float32Array<ArrayBuffer>);
    gpu.device.queue.writeBuffer(run.latent.buffer, 0, noise as Float32Array<ArrayBuffer>);
    await run.encodeCaption();
    for (let k = 0; k < steps; k++) {
      options.signal?.throwIfAborted();
      await run.step(schedule.modelT[k], eulerAlpha(schedule.sigmas, k));
      // The step's work done, not only submitted: progress is true, and an abort stops what is not queued.
      await gpu.device.queue.onSubmittedWorkDone();
      options.onStep?.({ step: k + 1, steps });
    }
    const viaHost = !this.resident.dit || !this.resident.vae;
    const latent = options.keepLatent || viaHost ? (await gpu.read(run.latent)) as Float32Array : undefined;
    if (!this.resident.dit) this.#releaseDit();

    // The VAE.
    const vae = await this.#loadVae();
    const decode = vae.prepare(h, w);
    try {
      if (viaHost) gpu.device.queue.writeBuffer(decode.latent.buffer, 0, latent as Float32Array<ArrayBuffer>);
      else {
        await gpu.withErrorScopes(() => "z-image latent to the decoder", () => {
          const encoder = gpu.device.createCommandEncoder();
          encoder.copyBufferToBuffer(run.latent.buffer, 0, decode.latent.buffer, 0, 4 * latentLength);
          gpu.device.queue.submit([encoder.finish()]);
        });
      }
      await decode.run();
      const decoded = (await gpu.read(decode.decoded)) as Float32Array;
      return {
        width,
        height,
        data: decodedToRgba(decoded, width, height),
        seed,
        captionTokens,
        latent: options.keepLatent ? latent : undefined,
      };
    } finally {
      decode.destroy();
      if (!this.resident.vae) {
        this.#vae?.destroy();
        this.#vae = undefined;
      }
    }
  }

  #releaseEncoder(): void {
    this.#encoder?.destroy();
    this.#encoder = undefined;
  }

  #releaseDit(): void {
    this.#run?.run.destroy();
    this.#run = undefined;
    this.#dit?.destroy();
    this.#dit = undefined;
  }

  /** Frees the weights (and the device, when the model made it). */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#releaseEncoder();
    this.#releaseDit();
    this.#vae?.destroy();
    this.#vae = undefined;
    this.#copies.clear();
    if (this.#ownsDevice) this.#gpu.destroy();
  }
}
