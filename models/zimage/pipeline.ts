/**
 * Z-Image Turbo text-to-image: caption features → the Turbo sampler's DiT steps → the VAE decoder →
 * RGBA bytes (upstream's `generate()` with guidance 0, one image).
 *
 * Residency: the DiT's block weights are kept on the GPU as f32, q8 or q4g128 (`format`), everything
 * else as f32. When the DiT's and the VAE's together fit
 * `maxResidentBytes` (default 4 GiB), both are loaded by {@link ZImage.load} and stay; otherwise each
 * stage is loaded when it runs and released after it (DiT, then VAE), and the latent passes between
 * them through host memory. A stage larger than the budget on its own is refused (streaming a DiT's
 * blocks from host memory is not implemented).
 *
 * @module
 */

import { acquireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { decodedToRgba } from "../image.ts";
import { gaussianNoise } from "../noise.ts";
import { vaeScaleFactor } from "./config.ts";
import { eulerAlpha, turboSchedule } from "./scheduler.ts";
import { type ModelFiles, openZImage, type ZImageCheckpoint } from "./source.ts";
import { LINEAR_FORMATS, type LinearFormat } from "./linear.ts";
import { type DitRun, ditWeightBytes, ZImageDit } from "./transformer/dit.ts";
import { VaeDecoder } from "./vae/decoder.ts";

/** The default residency budget: 4 GiB. */
export const DEFAULT_MAX_RESIDENT_BYTES = 4 * 2 ** 30;

/** Progress of {@link ZImage.load} and of staged loads: a stage, and its parts done of all. */
export interface LoadProgress {
  /** `dit` or `vae`. */
  stage: "dit" | "vae";
  /** Parts done (DiT: blocks and the embedders; VAE: 1 when loaded). */
  done: number;
  /** Parts in all. */
  total: number;
}

/** Options of {@link ZImage.load}. */
export interface ZImageLoadOptions {
  /** The device (default: `acquireDevice()`, destroyed with the model). */
  device?: ResidentDevice;
  /**
   * The DiT blocks' weight format on the GPU (default f32): `q8` or `q4g128` quantize the blocks'
   * Linear weights while loading (the embedders, the final layer and the VAE stay f32).
   */
  format?: LinearFormat;
  /** Bytes of weights the GPU may hold at once (default 4 GiB). */
  maxResidentBytes?: number;
  /** Load progress. */
  onProgress?: (progress: LoadProgress) => void;
}

/** Options of {@link ZImage.generate}. */
export interface GenerateOptions {
  /** The prompt (needs the text encoder; see `promptEmbeds`). */
  prompt?: string;
  /**
   * Caption features `[tokens, capDim]` (the text encoder's `hidden_states[-2]` for the prompt's
   * chat-templated tokens), in place of `prompt`.
   */
  promptEmbeds?: Float32Array;
  /** Pixels, a multiple of 16 (default 1024). */
  width?: number;
  /** Pixels, a multiple of 16 (default 1024). */
  height?: number;
  /** Euler steps (default 8, Turbo's). */
  steps?: number;
  /** Seed of the starting noise (models/noise.ts); default a random one. */
  seed?: number;
  /** The starting latent `[16, height/8, width/8]` itself, in place of a seed's noise. */
  noise?: Float32Array;
  /** Aborts between steps. */
  signal?: AbortSignal;
  /** Called after each step. */
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
  /** The final latent `[16, height/8, width/8]`, when asked for. */
  latent?: Float32Array;
}

function weightBytes(store: TensorStore): number {
  return store.tensors.reduce((n, t) => n + 4 * t.shape.reduce((a, b) => a * b, 1), 0);
}

/** Z-Image Turbo on a WebGPU device. */
export class ZImage {
  /** The checkpoint. */
  readonly checkpoint: ZImageCheckpoint;
  /** Whether both stages stay resident. */
  readonly resident: boolean;
  readonly #gpu: ResidentDevice;
  readonly #ownsDevice: boolean;
  readonly #onProgress?: (progress: LoadProgress) => void;
  readonly #format: LinearFormat;
  #dit?: ZImageDit;
  #vae?: VaeDecoder;
  #run?: { key: string; run: DitRun };
  #busy = false;
  #destroyed = false;

  private constructor(
    gpu: ResidentDevice,
    ownsDevice: boolean,
    checkpoint: ZImageCheckpoint,
    resident: boolean,
    format: LinearFormat,
    onProgress?: (progress: LoadProgress) => void,
  ) {
    this.#gpu = gpu;
    this.#format = format;
    this.#ownsDevice = ownsDevice;
    this.checkpoint = checkpoint;
    this.resident = resident;
    this.#onProgress = onProgress;
  }

  /**
   * Opens a checkpoint (checking every component's tensors first) and loads what the budget keeps.
   *
   * @param source the model's files (diffusers directory or ComfyUI's files), or a checkpoint already opened
   * @param options device, format, budget, progress
   * @returns the model
   * @throws Error naming a missing file, a tensor that does not fit, an unknown format, or a stage over the budget
   */
  static async load(source: ModelFiles | ZImageCheckpoint, options: ZImageLoadOptions = {}): Promise<ZImage> {
    const format = options.format ?? "f32";
    if (!LINEAR_FORMATS.includes(format)) {
      throw new Error(`ZImage.load: format must be one of ${LINEAR_FORMATS.join(", ")}, got ${String(format)}`);
    }
    const budget = options.maxResidentBytes ?? DEFAULT_MAX_RESIDENT_BYTES;
    if (!(Number.isFinite(budget) && budget > 0)) {
      throw new Error(`ZImage.load: maxResidentBytes must be a number > 0, got ${budget}`);
    }
    const checkpoint = "open" in source ? await openZImage(source) : source;
    const dit = ditWeightBytes(checkpoint.config.dit, format), vae = weightBytes(checkpoint.vae);
    for (const [stage, bytes] of [["DiT", dit], ["VAE decoder", vae]] as const) {
      if (bytes > budget) {
        throw new Error(
          `ZImage.load: the ${stage} needs ${bytes} bytes of weights (${format}), over maxResidentBytes ${budget} ` +
            `(streaming its blocks from host memory is not implemented)`,
        );
      }
    }
    const gpu = options.device ?? await acquireDevice();
    const model = new ZImage(gpu, !options.device, checkpoint, dit + vae <= budget, format, options.onProgress);
    try {
      if (model.resident) {
        await model.#loadDit();
        await model.#loadVae();
      }
    } catch (e) {
      model.destroy();
      throw e;
    }
    return model;
  }

  async #loadDit(): Promise<ZImageDit> {
    const { dit, config } = this.checkpoint;
    this.#dit ??= await ZImageDit.load(this.#gpu, dit, config.dit, {
      format: this.#format,
      onProgress: (done, total) => this.#onProgress?.({ stage: "dit", done, total }),
    });
    return this.#dit;
  }

  async #loadVae(): Promise<VaeDecoder> {
    if (!this.#vae) {
      this.#vae = await VaeDecoder.load(this.#gpu, this.checkpoint.vae, this.checkpoint.config.vae);
      this.#onProgress?.({ stage: "vae", done: 1, total: 1 });
    }
    return this.#vae;
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
    const scale = vaeScaleFactor(vaeConfig), unit = 2 * scale;
    for (const [name, v] of [["width", width], ["height", height]] as const) {
      if (!Number.isInteger(v) || v < unit || v % unit !== 0) {
        throw new Error(`ZImage.generate: ${name} must be a positive multiple of ${unit}, got ${v}`);
      }
    }
    const h = height / scale, w = width / scale, latentLength = ditConfig.inChannels * h * w;
    const cap = options.promptEmbeds;
    if (!cap) {
      throw new Error(
        "ZImage.generate: the text encoder is not wired into this pipeline yet: pass promptEmbeds " +
          `(hidden_states[-2] of Qwen3 for the chat-templated prompt, [tokens, ${ditConfig.capFeatDim}])`,
      );
    }
    if (!(cap instanceof Float32Array) || cap.length === 0 || cap.length % ditConfig.capFeatDim !== 0) {
      throw new Error(`ZImage.generate: promptEmbeds must be a Float32Array of [tokens >= 1, ${ditConfig.capFeatDim}]`);
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
      options.onStep?.({ step: k + 1, steps });
    }
    const latent = options.keepLatent || !this.resident ? (await gpu.read(run.latent)) as Float32Array : undefined;
    if (!this.resident) this.#releaseDit();

    const vae = await this.#loadVae();
    const decode = vae.prepare(h, w);
    try {
      if (latent && !this.resident) {
        gpu.device.queue.writeBuffer(decode.latent.buffer, 0, latent as Float32Array<ArrayBuffer>);
      } else {
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
        latent: options.keepLatent ? latent : undefined,
      };
    } finally {
      decode.destroy();
      if (!this.resident) {
        this.#vae?.destroy();
        this.#vae = undefined;
      }
    }
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
    this.#releaseDit();
    this.#vae?.destroy();
    this.#vae = undefined;
    if (this.#ownsDevice) this.#gpu.destroy();
  }
}
