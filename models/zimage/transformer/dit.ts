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

import type { ResidentDevice } from "../../../harness/device.ts";
import { copyToHost, type HostCopy, type PendingUploads } from "../../../harness/host_copy.ts";
import { scopedStore } from "../../../llm/weights/checkpoint.ts";
import type { TensorStore } from "../../../llm/safetensors.ts";
import { freeOnFailure } from "../../loading.ts";
import { type DitConfig, ditSizes } from "../config.ts";
import { type Activations, checkActivations, linearBytes, type LinearFormat } from "../../linear.ts";
import { blockTensorsOf, type BlockWeights, destroyBlock, loadBlock } from "./block.ts";
import { destroyEmbedders, type Embedders, loadEmbedders } from "./embedders.ts";
import { destroyModulation, loadModulation, loadPlainNorms } from "./modulation.ts";
import {
  type BlockSource,
  type DitCaptures,
  DitRun,
  type DitShape,
  type ModulatedBlock,
  type PlainBlock,
} from "./run.ts";

export { type DitCaptures, DitRun, type DitShape } from "./run.ts";

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
  /**
   * What the blocks' projections multiply (default `"f32"`): `"int8"` quantizes each projection's
   * input per row to int8 (once per input: q, k and v share theirs, w1 and w3 theirs) and multiplies
   * it by ops/matmul's integer-dot-product GEMMs, epilogues unchanged. For q8 and q4g128 weights, on
   * an adapter whose WGSL has `packed_4x8_integer_dot_product`; refused otherwise, before any upload.
   * The embedders, the adaLN and the final layer stay f32. Its cost in accuracy: README.md's Z-Image section.
   */
  activations?: Activations;
  /** Called after each tensor group is on the GPU: groups done, groups in all. */
  onProgress?: (done: number, total: number) => void;
}

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
  /** What the blocks' projections multiply. */
  readonly activations: Activations;
  /** A restored DiT's block weights not yet written: each block's are written just before its first run. */
  #uploads?: PendingUploads;

  private constructor(
    gpu: ResidentDevice,
    config: DitConfig,
    embedders: Embedders,
    noiseRefiner: ModulatedBlock[],
    contextRefiner: PlainBlock[],
    layers: ModulatedBlock[],
    activations: Activations,
    slots?: readonly [BlockWeights, BlockWeights],
  ) {
    this.#gpu = gpu;
    this.config = config;
    this.#embedders = embedders;
    this.#noiseRefiner = noiseRefiner;
    this.#contextRefiner = contextRefiner;
    this.#layers = layers;
    this.#slots = slots;
    this.activations = activations;
  }

  /** Whether the blocks' projections stream from host memory through two resident slots. */
  get streamed(): boolean {
    return this.#slots !== undefined;
  }

  /**
   * Bytes of block weights a restore from a host copy ({@link hostCopy}) has not yet written: each
   * block's are written just before the block's first run, so the host's writes of later blocks
   * overlap the GPU's work on earlier ones. 0 for a DiT loaded from its checkpoint.
   */
  get pendingBytes(): number {
    return this.#uploads?.bytes ?? 0;
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
    const activations = checkActivations(options.activations, format, "ZImageDit.load");
    const total = 1 + 2 * config.nRefinerLayers + config.nLayers;
    let done = 0;
    const progress = () => options.onProgress?.(++done, total);
    // A load that fails halfway (a read, a device error) frees what it uploaded.
    return await freeOnFailure(async (keep) => {
      const embedders = keep(await loadEmbedders(gpu, store, config));
      progress();
      // Streaming: the first two blocks' projections stay as the slots; every block's are read back.
      const slots: BlockWeights[] = [];
      const projections = async (s: TensorStore, label: string): Promise<BlockSource> => {
        const weights = keep(await loadBlock(gpu, s, config, label, format));
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
          modulation: keep(await loadModulation(gpu, s, config, label, format)),
        };
        progress();
        return block;
      };
      const noiseRefiner: ModulatedBlock[] = [], contextRefiner: PlainBlock[] = [], layers: ModulatedBlock[] = [];
      for (let i = 0; i < config.nRefinerLayers; i++) noiseRefiner.push(await modulated(`noise_refiner.${i}.`));
      for (let i = 0; i < config.nRefinerLayers; i++) {
        const prefix = `context_refiner.${i}.`, s = scopedStore(store, prefix), label = prefix.slice(0, -1);
        contextRefiner.push({ weights: await projections(s, label), norms: keep(await loadPlainNorms(gpu, s, label)) });
        progress();
      }
      for (let i = 0; i < config.nLayers; i++) layers.push(await modulated(`layers.${i}.`));
      if (options.stream && slots.length === 1) {
        slots.push(keep(await loadBlock(gpu, scopedStore(store, "layers.0."), config, "slot", format)));
      }
      const pair = options.stream ? [slots[0], slots[1]] as const : undefined;
      return new ZImageDit(gpu, config, embedders, noiseRefiner, contextRefiner, layers, activations, pair);
    });
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
      activations: this.activations,
      uploads: this.#uploads,
    }, captures);
  }

  /**
   * Host copies of the weights on the GPU (read back once; a streamed DiT's host blocks are shared),
   * whose `restore` makes this DiT again by uploads alone, with no checkpoint read or quantization.
   * The restore writes the embedders, adaLN, norms and slots at once, and each resident block's
   * projections just before that block's first run ({@link pendingBytes}): the first step after a
   * restore overlaps its uploads with its own work.
   *
   * @returns the copy; `restore(gpu)` gives a new DiT of the same weights
   */
  async hostCopy(): Promise<HostCopy<ZImageDit>> {
    const parts = {
      embedders: this.#embedders,
      noiseRefiner: this.#noiseRefiner,
      contextRefiner: this.#contextRefiner,
      layers: this.#layers,
      slots: this.#slots,
    };
    const config = this.config, activations = this.activations;
    const copy = await copyToHost(
      this.#gpu,
      parts,
      (p, gpu) =>
        new ZImageDit(gpu, config, p.embedders, p.noiseRefiner, p.contextRefiner, p.layers, activations, p.slots),
    );
    const restoreDeferred = (gpu?: ResidentDevice) => {
      const { value, uploads } = copy.restoreDeferred(gpu);
      uploads.writeAllBut(value.#blockBuffers());
      value.#uploads = uploads;
      return { value, uploads };
    };
    return { bytes: copy.bytes, restore: (gpu) => restoreDeferred(gpu).value, restoreDeferred };
  }

  /** The buffers of the resident blocks' projections. */
  #blockBuffers(): GPUBuffer[] {
    return [...this.#noiseRefiner, ...this.#contextRefiner, ...this.#layers].flatMap((b) =>
      "resident" in b.weights ? blockTensorsOf(b.weights.resident).map((t) => t.buffer) : []
    );
  }

  /** Frees the weights. */
  destroy(): void {
    this.#uploads?.clear();
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
