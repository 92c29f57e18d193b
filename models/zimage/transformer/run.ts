/**
 * The DiT bound to one latent size and caption length ({@link DitRun}, made by `ZImageDit.prepare`):
 * its input, output and work tensors, and its recordings, bound once and replayed each step. Where the
 * blocks stream (`ZImageDit.load`'s `stream`), a run is several submissions, each streamed block's
 * bytes written into its slot before its own; so is the run of a DiT restored from a host copy whose
 * blocks' bytes are still pending (`ZImageDit.pendingBytes`), each block's written before its first
 * submission.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../../harness/device.ts";
import type { PendingUploads } from "../../../harness/host_copy.ts";
import { axpyInplacePlan } from "../../../ops/axpy/mod.ts";
import { validateRopeAxesShape } from "../../../ops/rope/mod.ts";
import { type DitConfig, ditSizes } from "../config.ts";
import type { Activations } from "../../linear.ts";
import type { Program } from "../../../harness/program.ts";
import { Recording, Steps } from "../program.ts";
import {
  allocBlockScratch,
  type BlockNorms,
  type BlockScratch,
  blockSteps,
  blockTensorsOf,
  type BlockWeights,
  destroyBlockScratch,
} from "./block.ts";
import {
  allocTimestepTensors,
  captionEmbedSteps,
  type Embedders,
  finalSteps,
  imageEmbedSteps,
  padSteps,
  timestepSteps,
  type TimestepTensors,
} from "./embedders.ts";
import { allocModulationScratch, type Modulation, modulationCopies, modulationSteps } from "./modulation.ts";
import { captionPositions, imagePositions, paddedLength } from "./positions.ts";
import { timestepSinusoid } from "./sinusoid.ts";

/**
 * A block's projections: on the GPU, or (streaming) as host copies of its tensors' bytes, in
 * {@link blockTensorsOf}'s order, uploaded into a resident slot before the block runs.
 */
export type BlockSource = { resident: BlockWeights } | { host: Uint8Array[] };

/** A modulated block: its projections and its adaLN (always resident). */
export interface ModulatedBlock {
  weights: BlockSource;
  modulation: Modulation;
}

/** An unmodulated block (context refiner): its projections and plain norms. */
export interface PlainBlock {
  weights: BlockSource;
  norms: BlockNorms;
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

/** The model's parts a run binds to. */
export interface DitParts {
  embedders: Embedders;
  noiseRefiner: ModulatedBlock[];
  contextRefiner: PlainBlock[];
  layers: ModulatedBlock[];
  slots?: readonly [BlockWeights, BlockWeights];
  /** What the blocks' projections multiply: the activations as they are, or quantized per row to int8. */
  activations: Activations;
  /** Resident blocks' bytes a restore left to write before their first run. */
  uploads?: PendingUploads;
}

/**
 * Part of a run: dispatches and copies, and first either (streaming) a block's bytes to upload into
 * its slot, or (a restored DiT) the buffers of a resident block whose pending bytes to write.
 */
interface Phase {
  steps: Steps;
  upload?: { host: Uint8Array[]; slot: BlockWeights };
  pending?: { uploads: PendingUploads; buffers: GPUBuffer[] };
}

/** Phases bound once: one recording each, or all in one where no phase writes first. */
interface BoundPhases {
  recordings: Recording[];
  uploads: (Phase["upload"] | undefined)[];
  pending: (Phase["pending"] | undefined)[];
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
    const s = this.#scratch = allocBlockScratch(gpu, config, N, rope, parts.activations === "int8");
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
        const buffers = blockTensorsOf(w.resident).map((t) => t.buffer), uploads = parts.uploads;
        phases.push(uploads?.has(buffers) ? { steps, pending: { uploads, buffers } } : { steps });
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

  /** Submissions of one step: 1, or one per block where blocks stream or were bound with bytes pending. */
  get submissionsPerStep(): number {
    return this.#step.recordings.length;
  }

  /** The programs of one step, in order (harness/timing.ts `profileProgram` times them dispatch by dispatch). */
  get stepPrograms(): Program[] {
    return this.#step.recordings.flatMap((r) => r.programs);
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
      throw new Error(
        `DitRun.${what}: the blocks stream through slots or write their restored bytes first, one submission ` +
          "each; use the async form",
      );
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

/** Binds phases: one recording for all when no phase writes first, else one per phase. */
function bindPhases(gpu: ResidentDevice, name: string, phases: Phase[]): BoundPhases {
  if (phases.every((p) => p.upload === undefined && p.pending === undefined)) {
    return {
      recordings: [new Recording(gpu, name, phases.flatMap((p) => p.steps.list))],
      uploads: [undefined],
      pending: [undefined],
    };
  }
  const recordings: Recording[] = [];
  try {
    for (const [i, p] of phases.entries()) recordings.push(new Recording(gpu, `${name} ${i}`, p.steps.list));
  } catch (e) {
    for (const r of recordings) r.destroy();
    throw e;
  }
  return { recordings, uploads: phases.map((p) => p.upload), pending: phases.map((p) => p.pending) };
}

/**
 * Submits bound phases in order: before a streamed block, its bytes are written into its slot (the
 * queue orders the write after the work submitted before it, which last read that slot two blocks
 * earlier, and before the block's own submission); before a restored block's first run, its pending
 * bytes are written, while the GPU still works on the blocks submitted before it.
 */
function submitPhases(gpu: ResidentDevice, phases: BoundPhases, after?: Recording): void {
  const queue = gpu.device.queue;
  phases.recordings.forEach((recording, i) => {
    const pending = phases.pending[i];
    pending?.uploads.write(pending.buffers);
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
