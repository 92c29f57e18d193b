/**
 * Anima's DiT (Cosmos-Predict2's MiniTrainDIT), velocity prediction for a batch of latents that
 * share one σ: the two CFG passes are one batch of two, differing only in their context rows.
 *
 * The forward, as programs of ops:
 * - Timestep path, once per step: the σ sinusoid (host, float64; timestep.ts) goes through
 *   `t_embedder.1` (`linear_1` without bias, SiLU, `linear_2` to 3D) to give `adaln_lora`,
 *   and through `t_embedding_norm` (RMSNorm) to give `emb`, what the modulations read.
 * - Patchify: `b c (t r) (h m) (w n) → b t h w (c r m n)`, feature `c · 4 + m · 2 + n`, channel
 *   slowest, one gather of the latent's elements (the same latent for every batch item); the
 *   padding-mask channel (zeros for text-to-image) holds features 64 .. 67, so its four weight
 *   columns multiply zeros and are dropped at load. Then `x_embedder` (Linear 68 → D, no bias).
 * - The blocks (dit_block.ts) and the final layer: `LayerNorm(x) · (1 + scale) + shift` with
 *   shift, scale from `final_layer.adaln_modulation(emb) + adaln_lora[:2D]`, then Linear D → 64.
 * - Unpatchify: `B T H W (p1 p2 t C) → B C (T t) (H p1) (W p2)`, feature `(p1 · 2 + p2) · 16 + C`,
 *   channel fastest (the opposite of the patchify), one permute.
 *
 * @module
 */

import type { GpuTensor, HostArray, ResidentDevice } from "../../harness/device.ts";
import { copyToHost, type HostCopy } from "../../harness/host_copy.ts";
import type { Program } from "../../harness/program.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { freeOnFailure } from "../loading.ts";
import { type DitConfig, ditConfigFromStore, NORM_EPS } from "./config.ts";
import {
  block,
  blockBytes,
  type BlockInputs,
  blockTensors,
  type BlockWeights,
  destroyBlock,
  destroyModulation,
  type DitFormat,
  loadBlock,
  loadModulation,
  modulate,
  type Modulation,
  modulationBytes,
  type StepEmbedding,
  type Tap,
} from "./dit_block.ts";
import { Graph } from "./graph.ts";
import {
  activation,
  add,
  gather,
  linear,
  type LinearSlice,
  loadLinear,
  loadVector,
  modulatedLayernorm,
  permute,
  rmsnorm,
  type RopeTables,
  ropeTables,
} from "./layers.ts";
import { destroyLinear, layerBytes, type Linear } from "../linear.ts";
import { ditPositions } from "./rope.ts";
import { timestepSinusoid } from "./timestep.ts";
import { checkDitLayout } from "./weights.ts";

/** The DiT's per-run inputs on the device, for {@link AnimaDit.build}. */
export interface DitInputs {
  /** Batch items (2: the CFG passes; 1: cfg = 1 or a single pass). */
  batch: number;
  /** Latent height (even). */
  height: number;
  /** Latent width (even). */
  width: number;
  /** The latent `[channels, height, width]`, shared by every batch item. */
  latent: GpuTensor;
  /** The timestep sinusoid `[D]` ({@link timestepSinusoid} of σ). */
  sinusoid: GpuTensor;
  /** Context rows `[batch, 512, contextDim]`. */
  context: GpuTensor;
}

/** Index tensors of one latent size and batch, made by {@link AnimaDit.geometry}. */
export interface DitGeometry {
  /** The patchify gather's index `[batch · tokens · channels · 4]` (i32). */
  patchIndex: GpuTensor;
  /** Token positions `[batch · tokens, 3]` (i32). */
  positions: GpuTensor;
}

/**
 * The patchify gather's index: for item b, token (h, w) and feature `c · 4 + m · 2 + n`, the
 * latent element `c · H · W + (2h + m) · W + (2w + n)`.
 *
 * @param channels latent channels
 * @param height latent height (even)
 * @param width latent width (even)
 * @param batch batch items
 * @returns `[batch · (H/2) · (W/2) · channels · 4]`
 *
 * @example
 * ```ts
 * import { patchIndex } from "@xpu/ops/models/anima";
 * patchIndex(1, 2, 2, 1); // Int32Array [0, 1, 2, 3]: one token, one channel, its 2 x 2 patch
 * ```
 */
export function patchIndex(channels: number, height: number, width: number, batch: number): Int32Array {
  const hp = height / 2, wp = width / 2, features = channels * 4;
  const out = new Int32Array(batch * hp * wp * features);
  let i = 0;
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < hp; h++) {
      for (let w = 0; w < wp; w++) {
        for (let c = 0; c < channels; c++) {
          for (let m = 0; m < 2; m++) {
            for (let n = 0; n < 2; n++) out[i++] = c * height * width + (2 * h + m) * width + (2 * w + n);
          }
        }
      }
    }
  }
  return out;
}

/**
 * The DiT, its weights resident on the device.
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { AnimaDit, ditStores } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const gpu = await acquireDevice();
 * const dit = await AnimaDit.load(gpu, ditStores(await open("weights_dit")).dit);
 * const latent = new Float32Array(16 * 4 * 6).fill(0.1);
 * const v = await dit.run(latent, 1, new Float32Array(512 * 32), 4, 6); // sigma 1, an all-zero context
 * console.log(v.length); // 16 * 4 * 6
 * dit.destroy();
 * gpu.destroy();
 * ```
 */
export class AnimaDit {
  /** Its sizes. */
  readonly config: DitConfig;
  readonly #gpu: ResidentDevice;
  readonly #xEmbed: Linear;
  readonly #tLinear1: Linear;
  readonly #tLinear2: Linear[];
  readonly #tNorm: GpuTensor;
  /** Every block's weights, or (streamed) the two slots blocks are written into in turn. */
  readonly #blocks: BlockWeights[];
  /** Streamed: every block's tensors on the host, in {@link blockTensors}' order. */
  readonly #hostBlocks?: HostArray[][];
  readonly #segments = new WeakMap<Graph, { prologue: number; slots: [number, number] }>();
  readonly #finalMod: Modulation;
  readonly #finalLinear: Linear;
  readonly #rope: RopeTables;

  private constructor(
    gpu: ResidentDevice,
    config: DitConfig,
    w: {
      xEmbed: Linear;
      tLinear1: Linear;
      tLinear2: Linear[];
      tNorm: GpuTensor;
      blocks: BlockWeights[];
      hostBlocks?: HostArray[][];
      finalMod: Modulation;
      finalLinear: Linear;
    },
  ) {
    this.#gpu = gpu;
    this.config = config;
    this.#xEmbed = w.xEmbed;
    this.#tLinear1 = w.tLinear1;
    this.#tLinear2 = w.tLinear2;
    this.#tNorm = w.tNorm;
    this.#blocks = w.blocks;
    this.#hostBlocks = w.hostBlocks;
    this.#finalMod = w.finalMod;
    this.#finalLinear = w.finalLinear;
    this.#rope = ropeTables(gpu, {
      heads: config.heads,
      headDim: config.headDim,
      axesDims: config.ropeDims,
      theta: config.ropeTheta,
      pairing: "half",
    });
  }

  /**
   * Checks the DiT's tensors against its layout and uploads them.
   *
   * @param gpu the device
   * @param store the DiT's tensors (names without `net.`; see `ditStores`)
   * @param options `format` (`q8`: the blocks' projections and MLPs as int8 codes with a scale per
   *   row, quantised on the GPU while loading; everything else f32); `stream` (the blocks kept in
   *   host memory, prepared, and written in turn into two resident slots during each forward: two
   *   blocks' weights on the device instead of all); `onProgress`, called after each block with
   *   (blocks loaded, blocks)
   * @returns the DiT
   * @throws Error naming every missing or mis-shaped tensor, before reading any
   */
  static async load(
    gpu: ResidentDevice,
    store: TensorStore,
    options: { format?: DitFormat; stream?: boolean; onProgress?: (done: number, total: number) => void } = {},
  ): Promise<AnimaDit> {
    const format = options.format ?? "f32";
    if (format !== "f32" && format !== "q8") {
      throw new Error(`anima DiT: format must be "f32" or "q8", got ${String(format)}`);
    }
    const config = ditConfigFromStore(store);
    checkDitLayout(store, config);
    const D = config.dim;
    const features = config.channels * config.patch * config.patch;
    // A load that fails halfway (a read, a device error) frees what it uploaded.
    return await freeOnFailure(async (keep) => {
      const lin = async (name: string, slice?: LinearSlice) => keep(await loadLinear(gpu, store, name, "f32", slice));
      const xEmbed = await lin("x_embedder.proj.1.weight", { cols: [0, features] });
      const tLinear1 = await lin("t_embedder.1.linear_1.weight");
      const tLinear2: Linear[] = [];
      for (let c = 0; c < 3; c++) {
        tLinear2.push(await lin("t_embedder.1.linear_2.weight", { rows: [c * D, (c + 1) * D] }));
      }
      const blocks: BlockWeights[] = [];
      const hostBlocks: HostArray[][] | undefined = options.stream ? [] : undefined;
      for (let i = 0; i < config.blocks; i++) {
        const w = keep(await loadBlock(gpu, store, config, i, format));
        if (hostBlocks) {
          // Prepared on the device (transposed, quantised), read back once; two stay as the slots.
          hostBlocks.push(await Promise.all(blockTensors(w).map((t) => gpu.read(t))));
          if (blocks.length < 2) blocks.push(w);
          else destroyBlock(w);
        } else blocks.push(w);
        options.onProgress?.(i + 1, config.blocks);
      }
      return new AnimaDit(gpu, config, {
        xEmbed,
        tLinear1,
        tLinear2,
        tNorm: keep(await loadVector(gpu, store, "t_embedding_norm.weight")),
        blocks,
        hostBlocks,
        finalMod: keep(await loadModulation(gpu, store, "final_layer.adaln_modulation", D, 2)),
        finalLinear: await lin("final_layer.linear.weight"),
      });
    });
  }

  /** Whether the blocks stream from host memory through two resident slots. */
  get streamed(): boolean {
    return this.#hostBlocks !== undefined;
  }

  /** Bytes of the DiT's weights on the device (streamed: two blocks' worth). */
  get residentBytes(): number {
    return layerBytes(this.#xEmbed) + layerBytes(this.#tLinear1) +
      this.#tLinear2.reduce((s, l) => s + layerBytes(l), 0) + 4 * this.#tNorm.length +
      this.#blocks.reduce((s, b) => s + blockBytes(b), 0) + layerBytes(this.#finalLinear) +
      modulationBytes(this.#finalMod);
  }

  /**
   * Uploads the index tensors of one latent size and batch (the caller destroys them).
   *
   * @param height latent height (even)
   * @param width latent width (even)
   * @param batch batch items
   * @returns the patchify index and the token positions
   * @throws Error when a size is odd or not positive
   */
  geometry(height: number, width: number, batch: number): DitGeometry {
    for (const [name, v] of [["height", height], ["width", width]] as const) {
      if (!Number.isInteger(v) || v < 2 || v % 2 !== 0) {
        throw new Error(`anima DiT: latent ${name} must be an even integer >= 2, got ${v}`);
      }
    }
    if (!Number.isInteger(batch) || batch < 1) {
      throw new Error(`anima DiT: batch must be an integer >= 1, got ${batch}`);
    }
    return {
      patchIndex: this.#gpu.upload(patchIndex(this.config.channels, height, width, batch), "patch index"),
      positions: this.#gpu.upload(ditPositions(1, height / 2, width / 2, batch), "token positions"),
    };
  }

  /**
   * Appends the forward to a graph.
   *
   * @param g the graph
   * @param inputs latent, sinusoid and context on the device
   * @param geometry from {@link geometry} for the same size and batch
   * @param tap receives intermediates: `t_emb_norm`, `adaln_lora{0,1,2}`, `x_embed`, block 0's
   *   (`block0_*`), `block0_out`, `block_last_out`, `final_layer`
   * @returns the velocity `[batch, channels, height, width]`
   */
  build(g: Graph, inputs: DitInputs, geometry: DitGeometry, tap?: Tap): GpuTensor {
    const c = this.config;
    const D = c.dim, B = inputs.batch;
    const hp = inputs.height / 2, wp = inputs.width / 2, T = hp * wp, rows = B * T;
    // Timestep path: emb = RMSNorm(sinusoid) and the adaln_lora chunks.
    const step = g.scope((): GpuTensor[] => {
      const emb = rmsnorm(g, inputs.sinusoid, 1, D, this.#tNorm, NORM_EPS);
      tap?.("t_emb_norm", emb);
      const h = linear(g, this.#tLinear1, inputs.sinusoid, 1, { activation: "silu" });
      const lora = this.#tLinear2.map((l, i) => {
        const chunk = linear(g, l, h, 1);
        tap?.(`adaln_lora${i}`, chunk);
        return chunk;
      });
      return [activation(g, "silu", emb, D), ...lora];
    });
    const embedding: StepEmbedding = { siluEmb: step[0], lora: [step[1], step[2], step[3]] };
    // Patchify (the latent's elements gathered as rows of one value) and embed.
    const x = g.scope(() => {
      const patches = gather(g, inputs.latent, geometry.patchIndex, inputs.latent.length, 1);
      return linear(g, this.#xEmbed, patches, rows);
    });
    if (tap) tap("x_embed", copyOf(g, x));
    const blockInputs: BlockInputs = {
      batch: B,
      tokens: T,
      context: inputs.context,
      positions: geometry.positions,
      rope: this.#rope,
      step: embedding,
    };
    if (this.#hostBlocks && tap) throw new Error("anima DiT: a streamed DiT replays its block programs: no taps");
    const prologue = g.steps.length;
    const ends: number[] = [];
    this.#blocks.forEach((w, i) => {
      block(g, w, x, c, blockInputs, tap && i === 0 ? (name, t) => tap(`block0_${name}`, t) : undefined);
      if (tap && i === 0) tap("block0_out", copyOf(g, x));
      ends.push(g.steps.length);
    });
    if (this.#hostBlocks) this.#segments.set(g, { prologue, slots: [ends[0], ends[1] ?? ends[0]] });
    if (tap && this.#blocks.length > 0) tap("block_last_out", x);
    const out = g.scope(() => {
      const [shift, scale] = modulate(g, this.#finalMod, embedding);
      const final = linear(g, this.#finalLinear, modulatedLayernorm(g, x, rows, D, scale, shift, NORM_EPS), rows);
      tap?.("final_layer", final);
      // [B, hp, wp, p1, p2, C] -> [B, C, hp, p1, wp, p2]
      return permute(g, final, [B, hp, wp, 2, 2, c.channels], [0, 5, 1, 3, 2, 4]);
    });
    g.release(x, ...step);
    return out;
  }

  /**
   * The run of a graph {@link build} filled (with any steps appended after it): one program, or,
   * streamed, the steps before the blocks, then per block its weights written into a slot and that
   * slot's block program, then the steps after the blocks, all submitted inside one pair of error
   * scopes (WebGPU orders each write after the work submitted before it).
   *
   * @param g the graph
   * @returns `run()` (one forward) and `destroy()` (its programs)
   */
  runner(g: Graph): { run(): Promise<void>; destroy(): void } {
    const segments = this.#segments.get(g);
    const host = this.#hostBlocks;
    if (!segments || !host) {
      const program = g.program();
      return { run: () => program.run(), destroy: () => program.destroy() };
    }
    const { prologue, slots: [endA, endB] } = segments;
    const programs = [g.program(0, prologue), g.program(prologue, endA), g.program(endA, endB), g.program(endB)];
    const [before, slotA, slotB, after] = programs;
    const slotTensors = this.#blocks.map(blockTensors);
    const device = this.#gpu.device;
    const submit = (p: Program) => {
      const encoder = device.createCommandEncoder();
      p.encode(encoder);
      device.queue.submit([encoder.finish()]);
    };
    return {
      run: () =>
        this.#gpu.withErrorScopes(() => `anima DiT, ${host.length} blocks streamed through 2 slots`, () => {
          submit(before);
          host.forEach((tensors, i) => {
            const slot = i % 2;
            tensors.forEach((data, j) =>
              device.queue.writeBuffer(slotTensors[slot][j].buffer, 0, data as Float32Array<ArrayBuffer>)
            );
            submit(slot === 0 ? slotA : slotB);
          });
          submit(after);
        }),
      destroy: () => programs.forEach((p) => p.destroy()),
    };
  }

  /**
   * One forward on host arrays (a batch of one): the velocity of `latent` at σ under `context`.
   *
   * @param latent `[channels, height, width]`
   * @param sigma the timestep input σ (in [0, 1])
   * @param context the context rows `[512, contextDim]` (the adapter's output zero-padded)
   * @param height latent height
   * @param width latent width
   * @returns the velocity `[channels, height, width]`
   */
  async run(
    latent: Float32Array,
    sigma: number,
    context: Float32Array,
    height: number,
    width: number,
  ): Promise<Float32Array> {
    const c = this.config;
    if (latent.length !== c.channels * height * width) {
      throw new Error(`anima DiT: latent must be [${c.channels}, ${height}, ${width}], got ${latent.length} values`);
    }
    if (context.length !== c.contextRows * c.contextDim) {
      throw new Error(`anima DiT: context must be [${c.contextRows}, ${c.contextDim}], got ${context.length} values`);
    }
    const gpu = this.#gpu;
    const geometry = this.geometry(height, width, 1);
    const owned = [
      gpu.upload(latent, "latent"),
      gpu.upload(timestepSinusoid(sigma, c.dim), "sinusoid"),
      gpu.upload(context, "context"),
    ];
    const g = new Graph(gpu, "anima DiT");
    try {
      const out = this.build(
        g,
        { batch: 1, height, width, latent: owned[0], sinusoid: owned[1], context: owned[2] },
        geometry,
      );
      const program = this.runner(g);
      try {
        await program.run();
      } finally {
        program.destroy();
      }
      return await gpu.read(out) as Float32Array;
    } finally {
      g.destroy();
      for (const t of [...owned, geometry.patchIndex, geometry.positions]) t.buffer.destroy();
    }
  }

  /**
   * Host copies of the weights on the GPU (read back once; a streamed DiT's host blocks are shared),
   * whose `restore` makes this DiT again by uploads alone, with no checkpoint read or quantization.
   *
   * @returns the copy; `restore(gpu)` gives a new DiT of the same weights
   */
  hostCopy(): Promise<HostCopy<AnimaDit>> {
    const config = this.config;
    return copyToHost(this.#gpu, {
      xEmbed: this.#xEmbed,
      tLinear1: this.#tLinear1,
      tLinear2: this.#tLinear2,
      tNorm: this.#tNorm,
      blocks: this.#blocks,
      hostBlocks: this.#hostBlocks,
      finalMod: this.#finalMod,
      finalLinear: this.#finalLinear,
    }, (w, gpu) => new AnimaDit(gpu, config, w));
  }

  /** Frees the DiT's weights. */
  destroy(): void {
    destroyLinear(this.#xEmbed);
    destroyLinear(this.#tLinear1);
    this.#tLinear2.forEach(destroyLinear);
    this.#blocks.forEach(destroyBlock);
    destroyModulation(this.#finalMod);
    destroyLinear(this.#finalLinear);
    for (const t of [this.#tNorm, this.#rope.pairAxis, this.#rope.invFreq]) t.buffer.destroy();
  }
}

/** A copy of a tensor at this point of the program (for a tap of a value that changes later). */
function copyOf(g: Graph, x: GpuTensor): GpuTensor {
  const zero = g.unused(x.length);
  return add(g, x, zero, x.length);
}
