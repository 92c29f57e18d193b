/**
 * The Z-Image DiT (upstream's `ZImageTransformer2DModel`, one image, no CFG) as recordings of library
 * ops: its weights loaded once ({@link ZImageDit.load}), and per latent size and caption length a
 * {@link DitRun} whose recordings are bound once and replayed each step.
 *
 * One forward:
 * 1. t_emb from the host's sinusoid; each modulated block's four norm weights and the final scale;
 * 2. the image stream: patchify, embed, pad to 32 with x_pad_token, the noise refiner (image tokens
 *    alone, image RoPE);
 * 3. the caption stream: embed, pad with cap_pad_token, the context refiner (caption alone,
 *    unmodulated). It does not depend on t, so it runs once per caption ({@link DitRun.encodeCaption})
 *    and is copied in at each step;
 * 4. the unified stream, image first, through the main layers, with both streams' positions;
 * 5. the final layer on every token, and unpatchify of the first (unpadded) image tokens.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../../harness/device.ts";
import { scopedStore } from "../../../llm/weights/checkpoint.ts";
import type { TensorStore } from "../../../llm/safetensors.ts";
import { axpyInplacePlan } from "../../../ops/axpy/mod.ts";
import { validateRopeAxesShape } from "../../../ops/rope/mod.ts";
import { type DitConfig, ditSizes } from "../config.ts";
import { linearBytes, type LinearFormat } from "../linear.ts";
import { Recording, Steps } from "../program.ts";
import {
  allocBlockScratch,
  type BlockNorms,
  type BlockScratch,
  blockSteps,
  blockTensorsOf,
  type BlockWeights,
  destroyBlock,
  destroyBlockScratch,
  loadBlock,
} from "./block.ts";
import {
  allocTimestepTensors,
  captionEmbedSteps,
  destroyEmbedders,
  type Embedders,
  finalSteps,
  imageEmbedSteps,
  loadEmbedders,
  padSteps,
  timestepSteps,
  type TimestepTensors,
} from "./embedders.ts";
import {
  allocModulationScratch,
  destroyModulation,
  loadModulation,
  loadPlainNorms,
  type Modulation,
  modulationCopies,
  modulationSteps,
} from "./modulation.ts";
import { captionPositions, imagePositions, paddedLength } from "./positions.ts";
import { timestepSinusoid } from "./sinusoid.ts";

/**
 * Bytes the DiT's weights take on the GPU, as {@link ZImageDit.load} uploads them.
 *
 * @param config the DiT config
 * @param format the blocks' Linear weights' format
 * @param stream whether the blocks' projections stream through two resident slots
 * @returns bytes
 *
 * @example
 * ```ts
 * import { ditWeightBytes, Z_IMAGE_TURBO } from "@xpu/ops/models/zimage";
 * (ditWeightBytes(Z_IMAGE_TURBO.dit, "q4g128") / 2 ** 30).toFixed(2); // "3.09" (GiB; f32: "22.94")
 * ```
 */
export function ditWeightBytes(config: DitConfig, format: LinearFormat, stream = false): number {
  const d = config.dim, { headDim, ffnHidden: F, adaln, patchFeatures: P } = ditSizes(config);
  const embedders = 4 * (1024 * 256 + 1024 + adaln * 1024 + adaln + d * P + d + config.capFeatDim +
    d * config.capFeatDim + d + 2 * 31 * d + d * adaln + d + P * d + P);
  const block = 4 * linearBytes(d, d, format) + 2 * 4 * headDim + 2 * linearBytes(F, d, format) +
    linearBytes(d, F, format);
  const modulation = linearBytes(4 * d, adaln, format) + 4 * (4 * d * 4 + 4 * d);
  const modulated = config.nRefinerLayers + config.nLayers;
  const blocks = stream ? 2 : modulated + config.nRefinerLayers;
  return embedders + blocks * block + modulated * modulation + config.nRefinerLayers * 4 * 4 * d;
}

/**
 * A block's projections: on the GPU, or (streaming) as host copies of its tensors' bytes, in
 * {@link blockTensorsOf}'s order, uploaded into a resident slot before the block runs.
 */
type BlockSource = { resident: BlockWeights } | { host: Uint8Array[] };

/** A modulated block: its projections and its adaLN (always resident). */
interface ModulatedBlock {
  weights: BlockSource;
  modulation: Modulation;
}

/** An unmodulated block (context refiner): its projections and plain norms. */
interface PlainBlock {
  weights: BlockSource;
  norms: BlockNorms;
}

/** Options of {@link ZImageDit.load}. */
export interface DitLoadOptions {
  /** The blocks' Linear weights' format (default f32); the embedders and the final layer stay f32. */
  format?: LinearFormat;
  /**
   * Keep the blocks' projections in host memory and upload each into one of two resident slots
   * before it runs (the adaLN, norms, embedders and final layer stay resident): for a DiT whose
   * weights do not fit the GPU budget.
   */
  stream?: boolean;
  /** Called after each tensor group is on the GPU: groups done, groups in all. */
  onProgress?: (done: number, total: number) => void;
}

/** The sizes of one run: the latent and the caption. */
export interface DitShape {
  /** Latent height (even). */
  latentH: number;
  /** Latent width (even). */
  latentW: number;
  /** Caption tokens (>= 1). */
  capLen: number;
}

/**
 * Where a test wants intermediates copied: a name → tensor map that a run fills (`t_emb`,
 * `x_embedded`, `noise_refiner.i`, `cap_embedded`, `context_refiner.i`, `unified`, `adaln0` (scale
 * chunks plus one), `attn0`, `layer.i`, `final`), the oracle's debug names.
 */
export type DitCaptures = Map<string, GpuTensor>;

/** The DiT's weights on the GPU. */
export class ZImageDit {
  /** The config. */
  readonly config: DitConfig;
  readonly #gpu: ResidentDevice;
  readonly #embedders: Embedders;
  readonly #noiseRefiner: ModulatedBlock[];
  readonly #contextRefiner: PlainBlock[];
  readonly #layers: ModulatedBlock[];
  readonly #slots?: readonly [BlockWeights, BlockWeights];

  private constructor(
    gpu: ResidentDevice,
    config: DitConfig,
    embedders: Embedders,
    noiseRefiner: ModulatedBlock[],
    contextRefiner: PlainBlock[],
    layers: ModulatedBlock[],
    slots?: readonly [BlockWeights, BlockWeights],
  ) {
    this.#gpu = gpu;
    this.config = config;
    this.#embedders = embedders;
    this.#noiseRefiner = noiseRefiner;
    this.#contextRefiner = contextRefiner;
    this.#layers = layers;
    this.#slots = slots;
  }

  /** Whether the blocks' projections stream from host memory through two resident slots. */
  get streamed(): boolean {
    return this.#slots !== undefined;
  }

  /**
   * Uploads the DiT's weights.
   *
   * @param gpu the device
   * @param store the DiT's tensors under their official names (weights.ts checks and maps a checkpoint)
   * @param config the DiT config
   * @param options progress
   * @returns the model
   */
  static async load(
    gpu: ResidentDevice,
    store: TensorStore,
    config: DitConfig,
    options: DitLoadOptions = {},
  ): Promise<ZImageDit> {
    const format = options.format ?? "f32";
    const total = 1 + 2 * config.nRefinerLayers + config.nLayers;
    let done = 0;
    const progress = () => options.onProgress?.(++done, total);
    const embedders = await loadEmbedders(gpu, store, config);
    progress();
    // Streaming: the first two blocks' projections stay as the slots; every block's are read back.
    const slots: BlockWeights[] = [];
    const projections = async (s: TensorStore, label: string): Promise<BlockSource> => {
      const weights = await loadBlock(gpu, s, config, label, format);
      if (!options.stream) return { resident: weights };
      const host = await Promise.all(
        blockTensorsOf(weights).map(async (t) => new Uint8Array((await gpu.read(t)).buffer)),
      );
      if (slots.length < 2) slots.push(weights);
      else destroyBlock(weights);
      return { host };
    };
    const modulated = async (prefix: string): Promise<ModulatedBlock> => {
      const s = scopedStore(store, prefix), label = prefix.slice(0, -1);
      const block = {
        weights: await projections(s, label),
        modulation: await loadModulation(gpu, s, config, label, format),
      };
      progress();
      return block;
    };
    const noiseRefiner: ModulatedBlock[] = [], contextRefiner: PlainBlock[] = [], layers: ModulatedBlock[] = [];
    for (let i = 0; i < config.nRefinerLayers; i++) noiseRefiner.push(await modulated(`noise_refiner.${i}.`));
    for (let i = 0; i < config.nRefinerLayers; i++) {
      const prefix = `context_refiner.${i}.`, s = scopedStore(store, prefix), label = prefix.slice(0, -1);
      contextRefiner.push({ weights: await projections(s, label), norms: await loadPlainNorms(gpu, s, label) });
      progress();
    }
    for (let i = 0; i < config.nLayers; i++) layers.push(await modulated(`layers.${i}.`));
    if (options.stream && slots.length === 1) {
      slots.push(await loadBlock(gpu, scopedStore(store, "layers.0."), config, "slot", format));
    }
    const pair = options.stream ? [slots[0], slots[1]] as const : undefined;
    return new ZImageDit(gpu, config, embedders, noiseRefiner, contextRefiner, layers, pair);
  }

  /**
   * Binds the recordings of one latent size and caption length.
   *
   * @param shape the latent's height and width (even) and the caption's length
   * @param captures where a test wants intermediates (see {@link DitCaptures})
   * @returns the run
   * @throws Error naming a size that is not an even integer >= 2 or a caption length < 1
   */
  prepare(shape: DitShape, captures?: DitCaptures): DitRun {
    const { latentH, latentW, capLen } = shape;
    for (const [name, v] of [["latentH", latentH], ["latentW", latentW]] as const) {
      if (!Number.isInteger(v) || v < 2 || v % 2 !== 0) {
        throw new Error(`ZImageDit.prepare: ${name} must be an even integer >= 2, got ${v}`);
      }
    }
    if (!Number.isInteger(capLen) || capLen < 1) {
      throw new Error(`ZImageDit.prepare: capLen must be an integer >= 1, got ${capLen}`);
    }
    return new DitRun(this.#gpu, this.config, shape, {
      embedders: this.#embedders,
      noiseRefiner: this.#noiseRefiner,
      contextRefiner: this.#contextRefiner,
      layers: this.#layers,
      slots: this.#slots,
    }, captures);
  }

  /** Frees the weights. */
  destroy(): void {
    destroyEmbedders(this.#embedders);
    for (const b of [...this.#noiseRefiner, ...this.#layers]) {
      if ("resident" in b.weights) destroyBlock(b.weights.resident);
      destroyModulation(b.modulation);
    }
    for (const b of this.#contextRefiner) {
      if ("resident" in b.weights) destroyBlock(b.weights.resident);
      for (const t of Object.values(b.norms)) t.buffer.destroy();
    }
    for (const slot of this.#slots ?? []) destroyBlock(slot);
  }
}

interface DitParts {
  embedders: Embedders;
  noiseRefiner: ModulatedBlock[];
  contextRefiner: PlainBlock[];
  layers: ModulatedBlock[];
  slots?: readonly [BlockWeights, BlockWeights];
}

/** Part of a run: dispatches and copies, and (streaming) a block's bytes to upload into its slot first. */
interface Phase {
  steps: Steps;
  upload?: { host: Uint8Array[]; slot: BlockWeights };
}

/** Phases bound once: one recording each, or all in one where nothing streams. */
interface BoundPhases {
  recordings: Recording[];
  uploads: (Phase["upload"] | undefined)[];
}

/**
 * The DiT bound to one latent size and caption length: its input, output and work tensors and its
 * recordings. Write the caption features to {@link capFeats} and run {@link encodeCaption} once per
 * caption; write the latent to {@link latent}; then {@link step} per sampling step.
 */
export class DitRun {
  /** The latent, `[16, H, W]`: the DiT's input, updated in place by each Euler step. */
  readonly latent: GpuTensor;
  /** The DiT's output, `[16, H, W]` (the velocity is minus this). */
  readonly output: GpuTensor;
  /** Caption features, `[capLen, capDim]`. */
  readonly capFeats: GpuTensor;
  /** Tokens of the unified stream (image and caption, each padded). */
  readonly tokens: number;
  readonly #gpu: ResidentDevice;
  readonly #config: DitConfig;
  readonly #caption: BoundPhases;
  readonly #step: BoundPhases;
  readonly #euler = new Map<number, Recording>();
  readonly #timestep: TimestepTensors;
  readonly #owned: GpuTensor[] = [];
  readonly #scratch: BlockScratch;

  /** @internal Use {@link ZImageDit.prepare}. */
  constructor(gpu: ResidentDevice, config: DitConfig, shape: DitShape, parts: DitParts, captures?: DitCaptures) {
    this.#gpu = gpu;
    this.#config = config;
    const { latentH: H, latentW: W, capLen } = shape;
    const d = config.dim, { headDim, patchFeatures } = ditSizes(config);
    const nImg = (H / 2) * (W / 2), imgPadded = paddedLength(nImg), capPadded = paddedLength(capLen);
    const N = imgPadded + capPadded;
    this.tokens = N;
    const own = (t: GpuTensor) => (this.#owned.push(t), t);
    const alloc = (n: number, label: string) => own(gpu.alloc("f32", n, label));
    this.latent = alloc(config.inChannels * H * W, "dit latent");
    this.output = alloc(config.inChannels * H * W, "dit output");
    this.capFeats = alloc(capLen * config.capFeatDim, "dit caption features");
    const unified = alloc(N * d, "dit unified stream");
    const caption = alloc(capPadded * d, "dit caption stream");
    const capNormed = alloc(capLen * config.capFeatDim, "dit caption normed");
    const patches = alloc(nImg * patchFeatures, "dit patches");
    const finalTokens = alloc(N * patchFeatures, "dit final tokens");
    const imgPos = imagePositions(H / 2, W / 2, capPadded), capPos = captionPositions(capPadded);
    const positions = own(gpu.upload(Int32Array.from([...imgPos, ...capPos]), "dit positions"));
    const capPositions = own(gpu.upload(capPos, "dit caption positions"));
    const rope = validateRopeAxesShape({
      tokens: 1,
      heads: 1,
      headDim,
      axesDims: config.axesDims,
      theta: config.ropeTheta,
    });
    const s = this.#scratch = allocBlockScratch(gpu, config, N, rope);
    const t = this.#timestep = allocTimestepTensors(gpu, config);
    const m = allocModulationScratch(gpu, config);
    this.#owned.push(...Object.values(t), ...Object.values(m));
    const capture = (steps: Steps, name: string, src: GpuTensor, length: number) => {
      if (!captures) return;
      const dst = own(gpu.alloc("f32", length, `capture ${name}`));
      captures.set(name, dst);
      steps.copy(src, 0, dst, 0, length);
    };
    const e = parts.embedders;

    // A block's phase: its projections resident, or (streaming) the next slot's, with the upload.
    let turn = 0;
    const block = (phases: Phase[], w: BlockSource, run: (steps: Steps, weights: BlockWeights) => void) => {
      const steps = new Steps();
      if ("resident" in w) {
        run(steps, w.resident);
        phases.push({ steps });
      } else {
        const slot = parts.slots![turn++ % 2];
        run(steps, slot);
        phases.push({ steps, upload: { host: w.host, slot } });
      }
    };

    // Once per caption: embed, pad, context refiner.
    const cs = new Steps(), captionPhases: Phase[] = [{ steps: cs }];
    captionEmbedSteps(cs, gpu, config, e, this.capFeats, capLen, capNormed, caption);
    padSteps(cs, e.capPad, caption, capLen, capPadded, d);
    capture(cs, "cap_embedded", caption, capPadded * d);
    parts.contextRefiner.forEach((b, i) =>
      block(captionPhases, b.weights, (steps, weights) => {
        blockSteps(steps, gpu, config, weights, b.norms, s, caption, capPadded, capPositions);
        capture(steps, `context_refiner.${i}`, caption, capPadded * d);
      })
    );

    // Each step.
    const ss = new Steps(), stepPhases: Phase[] = [{ steps: ss }];
    timestepSteps(ss, gpu, e, t);
    capture(ss, "t_emb", t.tEmb, t.tEmb.length);
    for (const b of parts.noiseRefiner) modulationSteps(ss, gpu, b.modulation, t.tEmb, m);
    parts.layers.forEach((b, i) => {
      modulationSteps(ss, gpu, b.modulation, t.tEmb, m, (mod) => i === 0 && capture(ss, "adaln0", mod, mod.length));
    });
    for (const b of [...parts.noiseRefiner, ...parts.layers]) modulationCopies(ss, b.modulation);
    imageEmbedSteps(ss, gpu, config, e, this.latent, H, W, patches, unified);
    padSteps(ss, e.xPad, unified, nImg, imgPadded, d);
    capture(ss, "x_embedded", unified, imgPadded * d);
    parts.noiseRefiner.forEach((b, i) =>
      block(stepPhases, b.weights, (steps, weights) => {
        blockSteps(steps, gpu, config, weights, b.modulation.norms, s, unified, imgPadded, positions);
        capture(steps, `noise_refiner.${i}`, unified, imgPadded * d);
      })
    );
    const mid = new Steps().copy(caption, 0, unified, imgPadded * d, capPadded * d);
    capture(mid, "unified", unified, N * d);
    stepPhases.push({ steps: mid });
    parts.layers.forEach((b, i) =>
      block(stepPhases, b.weights, (steps, weights) => {
        const attention = (a: GpuTensor) => i === 0 && capture(steps, "attn0", a, N * d);
        blockSteps(steps, gpu, config, weights, b.modulation.norms, s, unified, N, positions, attention);
        capture(steps, `layer.${i}`, unified, N * d);
      })
    );
    const last = new Steps();
    finalSteps(last, gpu, config, e, t, unified, N, H, W, s.h, finalTokens, this.output, s.noMask);
    capture(last, "final", finalTokens, N * patchFeatures);
    stepPhases.push({ steps: last });

    this.#caption = bindPhases(gpu, "z-image caption", captionPhases);
    this.#step = bindPhases(gpu, "z-image step", stepPhases);
  }

  /** Whether the blocks stream through slots (a run of several submissions, with uploads between). */
  get streamed(): boolean {
    return this.#step.uploads.some((u) => u !== undefined);
  }

  /** Dispatches of one step. */
  get dispatchesPerStep(): number {
    return this.#step.recordings.reduce((n, r) => n + r.dispatches, 0);
  }

  /** Runs the caption's embedder and context refiner on {@link capFeats}. */
  async encodeCaption(): Promise<void> {
    const gpu = this.#gpu;
    await gpu.withErrorScopes(() => "z-image caption", () => submitPhases(gpu, this.#caption));
  }

  /**
   * Records the caption's embedder and context refiner into `encoder` (for timing; not when streaming).
   *
   * @param encoder the command encoder
   * @throws Error when the blocks stream (each needs its own submission)
   */
  encodeCaptionInto(encoder: GPUCommandEncoder): void {
    this.#oneRecording("encodeCaptionInto", this.#caption).encode(encoder);
  }

  #oneRecording(what: string, phases: BoundPhases): Recording {
    if (phases.recordings.length !== 1) {
      throw new Error(`DitRun.${what}: the blocks stream through slots, one submission each; use the async form`);
    }
    return phases.recordings[0];
  }

  #writeSinusoid(t: number): void {
    const sinusoid = timestepSinusoid(t, this.#config.tScale) as Float32Array<ArrayBuffer>;
    this.#gpu.device.queue.writeBuffer(this.#timestep.sinusoid.buffer, 0, sinusoid);
  }

  #eulerOf(alpha: number): Recording {
    let euler = this.#euler.get(alpha);
    if (!euler) {
      const plan = axpyInplacePlan(this.#gpu, { n: this.latent.length, alpha });
      euler = new Recording(
        this.#gpu,
        `z-image euler ${alpha}`,
        new Steps().run(plan, [this.output, this.latent]).list,
      );
      this.#euler.set(alpha, euler);
    }
    return euler;
  }

  /**
   * Writes t's sinusoid and records the DiT's step (and, given `alpha`, the Euler update
   * `latent += alpha · output`) into `encoder`, for a caller that submits it (with timestamps, say).
   *
   * @param encoder the command encoder
   * @param t the DiT's t (scheduler.ts's modelT)
   * @param alpha the Euler multiplier (scheduler.ts's eulerAlpha), or none to leave the latent
   * @throws Error when the blocks stream (each needs its own submission)
   */
  encodeStep(encoder: GPUCommandEncoder, t: number, alpha?: number): void {
    const recording = this.#oneRecording("encodeStep", this.#step);
    this.#writeSinusoid(t);
    recording.encode(encoder);
    if (alpha !== undefined) this.#eulerOf(alpha).encode(encoder);
  }

  /**
   * Runs the DiT at t on {@link latent}, and, given `alpha`, the Euler step `latent += alpha · output`.
   *
   * @param t the DiT's t (scheduler.ts's modelT)
   * @param alpha the Euler multiplier (scheduler.ts's eulerAlpha), or none to leave the latent
   */
  async step(t: number, alpha?: number): Promise<void> {
    const gpu = this.#gpu;
    const euler = alpha === undefined ? undefined : this.#eulerOf(alpha);
    await gpu.withErrorScopes(() => `z-image step t=${t}`, () => {
      this.#writeSinusoid(t);
      submitPhases(gpu, this.#step, euler);
    });
  }

  /** Frees the run's tensors and recordings (not the model's weights). */
  destroy(): void {
    for (const r of [...this.#caption.recordings, ...this.#step.recordings, ...this.#euler.values()]) r.destroy();
    destroyBlockScratch(this.#scratch);
    for (const t of this.#owned) t.buffer.destroy();
  }
}

/** Binds phases: one recording for all when nothing streams, else one per phase. */
function bindPhases(gpu: ResidentDevice, name: string, phases: Phase[]): BoundPhases {
  if (phases.every((p) => p.upload === undefined)) {
    return { recordings: [new Recording(gpu, name, phases.flatMap((p) => p.steps.list))], uploads: [undefined] };
  }
  const recordings: Recording[] = [];
  try {
    for (const [i, p] of phases.entries()) recordings.push(new Recording(gpu, `${name} ${i}`, p.steps.list));
  } catch (e) {
    for (const r of recordings) r.destroy();
    throw e;
  }
  return { recordings, uploads: phases.map((p) => p.upload) };
}

/**
 * Submits bound phases in order: before a streamed block, its bytes are written into its slot (the
 * queue orders the write after the work submitted before it, which last read that slot two blocks
 * earlier, and before the block's own submission).
 */
function submitPhases(gpu: ResidentDevice, phases: BoundPhases, after?: Recording): void {
  const queue = gpu.device.queue;
  phases.recordings.forEach((recording, i) => {
    const upload = phases.uploads[i];
    if (upload) {
      blockTensorsOf(upload.slot).forEach((t, j) =>
        queue.writeBuffer(t.buffer, 0, upload.host[j] as Uint8Array<ArrayBuffer>)
      );
    }
    const encoder = gpu.device.createCommandEncoder();
    recording.encode(encoder);
    if (i === phases.recordings.length - 1) after?.encode(encoder);
    queue.submit([encoder.finish()]);
  });
}
