/**
 * The VAE decoder (FLUX.1's AE in diffusers' `AutoencoderKL` layout; no post-quant conv), batch 1,
 * in float32 as upstream decodes:
 *
 * ```
 * z = latent / scaling_factor + shift_factor            (0.3611, 0.1159: divide, then add)
 * x = conv_in(z)                                          16 → C_top
 * x = resnet(x); x = attention(x); x = resnet(x)          mid block
 * for each up block (channels reversed): 3 resnets, then (all but the last) nearest ×2 and a 3x3 conv
 * decoded = conv_out(SiLU(GroupNorm(x)))                  → 3 channels
 * ```
 *
 * The image is `(decoded / 2 + 0.5).clamp(0, 1)`, which models/image.ts turns into bytes.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../../harness/device.ts";
import { copyToHost, type HostCopy } from "../../../harness/host_copy.ts";
import type { TensorStore } from "../../../llm/safetensors.ts";
import { axpyPlan } from "../../../ops/axpy/mod.ts";
import { nearestUpsample2dPlan } from "../../../ops/upsample/mod.ts";
import { freeOnFailure } from "../../loading.ts";
import { type VaeConfig, vaeScaleFactor } from "../config.ts";
import { linearTensors } from "../../linear.ts";
import { Recording, Steps } from "../program.ts";
import {
  allocAttentionScratch,
  type AttentionScratch,
  loadMidAttention,
  type MidAttention,
  midAttentionSteps,
} from "./attention.ts";
import {
  type Conv,
  convSteps,
  type FeatureScratch,
  groupNormSteps,
  loadConv,
  loadNorm,
  loadResnet,
  type Norm,
  partialsFor,
  type Resnet,
  resnetSteps,
  siluSteps,
  tensorsOf,
} from "./resnet.ts";

/** An up block: its resnets, and the convolution after the ×2 upsampling (all but the last block). */
interface UpBlock {
  resnets: Resnet[];
  upsample?: Conv;
}

/**
 * The names and shapes of the decoder's tensors (under `decoder.`).
 *
 * @param config the VAE config
 * @returns name and shape of each tensor
 */
export function decoderTensors(config: VaeConfig): { name: string; shape: number[] }[] {
  const out: { name: string; shape: number[] }[] = [];
  const conv = (name: string, cout: number, cin: number, k: number) => {
    out.push({ name: `${name}.weight`, shape: [cout, cin, k, k] }, { name: `${name}.bias`, shape: [cout] });
  };
  const norm = (name: string, c: number) => {
    out.push({ name: `${name}.weight`, shape: [c] }, { name: `${name}.bias`, shape: [c] });
  };
  const resnet = (name: string, cin: number, cout: number) => {
    norm(`${name}.norm1`, cin);
    conv(`${name}.conv1`, cout, cin, 3);
    norm(`${name}.norm2`, cout);
    conv(`${name}.conv2`, cout, cout, 3);
    if (cin !== cout) conv(`${name}.conv_shortcut`, cout, cin, 1);
  };
  const channels = [...config.blockOutChannels].reverse(), top = channels[0];
  conv("conv_in", top, config.latentChannels, 3);
  resnet("mid_block.resnets.0", top, top);
  norm("mid_block.attentions.0.group_norm", top);
  for (const n of ["to_q", "to_k", "to_v", "to_out.0"]) {
    out.push({ name: `mid_block.attentions.0.${n}.weight`, shape: [top, top] });
    out.push({ name: `mid_block.attentions.0.${n}.bias`, shape: [top] });
  }
  resnet("mid_block.resnets.1", top, top);
  let prev = top;
  channels.forEach((c, i) => {
    for (let j = 0; j <= config.layersPerBlock; j++) resnet(`up_blocks.${i}.resnets.${j}`, j === 0 ? prev : c, c);
    if (i < channels.length - 1) conv(`up_blocks.${i}.upsamplers.0.conv`, c, c, 3);
    prev = c;
  });
  norm("conv_norm_out", channels[channels.length - 1]);
  conv("conv_out", config.outChannels, channels[channels.length - 1], 3);
  return out;
}

/**
 * Where a test wants intermediates copied (`z`, `conv_in`, `mid.resnet0`, `mid.attn`, `mid`, `up.i`,
 * `pre_conv_out`: the oracle's debug names).
 */
export type DecoderCaptures = Map<string, GpuTensor>;

/** The VAE decoder's weights on the GPU. */
export class VaeDecoder {
  /** The config. */
  readonly config: VaeConfig;
  readonly #gpu: ResidentDevice;
  readonly #convIn: Conv;
  readonly #mid: [Resnet, MidAttention, Resnet];
  readonly #up: UpBlock[];
  readonly #normOut: Norm;
  readonly #convOut: Conv;

  private constructor(
    gpu: ResidentDevice,
    config: VaeConfig,
    convIn: Conv,
    mid: [Resnet, MidAttention, Resnet],
    up: UpBlock[],
    normOut: Norm,
    convOut: Conv,
  ) {
    this.#gpu = gpu;
    this.config = config;
    this.#convIn = convIn;
    this.#mid = mid;
    this.#up = up;
    this.#normOut = normOut;
    this.#convOut = convOut;
  }

  /**
   * Uploads the decoder.
   *
   * @param gpu the device
   * @param store the decoder's tensors under their names without `decoder.` (weights.ts maps a checkpoint)
   * @param config the VAE config
   * @returns the decoder
   */
  static async load(gpu: ResidentDevice, store: TensorStore, config: VaeConfig): Promise<VaeDecoder> {
    // A load that fails halfway (a read, a device error) frees what it uploaded.
    return await freeOnFailure(async (keep) => {
      const convIn = keep(await loadConv(gpu, store, "conv_in"));
      const mid: [Resnet, MidAttention, Resnet] = [
        keep(await loadResnet(gpu, store, "mid_block.resnets.0")),
        keep(await loadMidAttention(gpu, store, "mid_block.attentions.0")),
        keep(await loadResnet(gpu, store, "mid_block.resnets.1")),
      ];
      const up: UpBlock[] = [];
      const blocks = config.blockOutChannels.length;
      for (let i = 0; i < blocks; i++) {
        const resnets: Resnet[] = [];
        for (let j = 0; j <= config.layersPerBlock; j++) {
          resnets.push(keep(await loadResnet(gpu, store, `up_blocks.${i}.resnets.${j}`)));
        }
        up.push({
          resnets,
          upsample: i < blocks - 1 ? keep(await loadConv(gpu, store, `up_blocks.${i}.upsamplers.0.conv`)) : undefined,
        });
      }
      const normOut = keep(await loadNorm(gpu, store, "conv_norm_out"));
      const convOut = keep(await loadConv(gpu, store, "conv_out"));
      return new VaeDecoder(gpu, config, convIn, mid, up, normOut, convOut);
    });
  }

  /**
   * Binds the decoder's recording for one latent size.
   *
   * @param latentH latent height
   * @param latentW latent width
   * @param captures where a test wants intermediates
   * @returns the run
   */
  prepare(latentH: number, latentW: number, captures?: DecoderCaptures): DecoderRun {
    for (const [name, v] of [["latentH", latentH], ["latentW", latentW]] as const) {
      if (!Number.isInteger(v) || v < 1) {
        throw new Error(`VaeDecoder.prepare: ${name} must be an integer >= 1, got ${v}`);
      }
    }
    return new DecoderRun(this.#gpu, this.config, latentH, latentW, {
      convIn: this.#convIn,
      mid: this.#mid,
      up: this.#up,
      normOut: this.#normOut,
      convOut: this.#convOut,
    }, captures);
  }

  /**
   * Host copies of the weights (read back once), whose `restore` makes this decoder again by uploads
   * alone, with no checkpoint read.
   *
   * @returns the copy; `restore(gpu)` gives a new decoder of the same weights
   */
  hostCopy(): Promise<HostCopy<VaeDecoder>> {
    const parts = {
      convIn: this.#convIn,
      mid: this.#mid,
      up: this.#up,
      normOut: this.#normOut,
      convOut: this.#convOut,
    };
    const config = this.config;
    return copyToHost(
      this.#gpu,
      parts,
      (p, gpu) => new VaeDecoder(gpu, config, p.convIn, p.mid, p.up, p.normOut, p.convOut),
    );
  }

  /** Frees the weights. */
  destroy(): void {
    const [r0, attention, r1] = this.#mid;
    const tensors = [
      ...tensorsOf(this.#convIn),
      ...tensorsOf(r0),
      ...tensorsOf(r1),
      ...tensorsOf(attention.norm),
      ...[attention.q, attention.k, attention.v, attention.out].flatMap(linearTensors),
      ...this.#up.flatMap((b) => [...b.resnets.flatMap(tensorsOf), ...(b.upsample ? tensorsOf(b.upsample) : [])]),
      ...tensorsOf(this.#normOut),
      ...tensorsOf(this.#convOut),
    ];
    for (const t of tensors) t.buffer.destroy();
  }
}

interface DecoderParts {
  convIn: Conv;
  mid: [Resnet, MidAttention, Resnet];
  up: UpBlock[];
  normOut: Norm;
  convOut: Conv;
}

/** The decoder bound to one latent size: write {@link latent}, {@link run}, read {@link decoded}. */
export class DecoderRun {
  /** The sampler-space latent, `[16, h, w]`. */
  readonly latent: GpuTensor;
  /** The decoder's output before `(x/2 + 0.5).clamp(0, 1)`, `[3, H, W]`. */
  readonly decoded: GpuTensor;
  /** Image height in pixels. */
  readonly height: number;
  /** Image width in pixels. */
  readonly width: number;
  readonly #recording: Recording;
  readonly #owned: GpuTensor[] = [];

  /** @internal Use {@link VaeDecoder.prepare}. */
  constructor(
    gpu: ResidentDevice,
    config: VaeConfig,
    h: number,
    w: number,
    parts: DecoderParts,
    captures?: DecoderCaptures,
  ) {
    const scale = vaeScaleFactor(config);
    this.height = h * scale;
    this.width = w * scale;
    const channels = [...config.blockOutChannels].reverse(), top = channels[0];
    // The largest feature map: each up block's channels at the resolution it works at (before its upsampling,
    // and after it, where the next block's first resnet reads it).
    let largest = Math.max(top, config.latentChannels) * h * w, partials = 0, H = h, W = w;
    const groups = config.normNumGroups;
    partials = Math.max(partials, partialsFor(gpu, top, h * w, groups));
    channels.forEach((c, i) => {
      const cin = i === 0 ? top : channels[i - 1];
      largest = Math.max(largest, Math.max(cin, c) * H * W);
      partials = Math.max(partials, partialsFor(gpu, cin, H * W, groups), partialsFor(gpu, c, H * W, groups));
      if (i < channels.length - 1) {
        H *= 2;
        W *= 2;
        largest = Math.max(largest, c * H * W);
      }
    });
    const own = (n: number, label: string) => {
      const t = gpu.alloc("f32", Math.max(n, 1), label);
      this.#owned.push(t);
      return t;
    };
    this.latent = own(config.latentChannels * h * w, "vae latent");
    this.decoded = own(config.outChannels * H * W, "vae decoded");
    const shift = gpu.upload(new Float32Array(config.latentChannels * h * w).fill(config.shiftFactor), "vae shift");
    this.#owned.push(shift);
    const x = own(largest, "vae x");
    const s: FeatureScratch = {
      a: own(largest, "vae a"),
      b: own(largest, "vae b"),
      partials: own(partials, "vae gn"),
      groups,
    };
    const att: AttentionScratch = allocAttentionScratch(gpu, top, h * w);
    this.#owned.push(...Object.values(att));
    const capture = (steps: Steps, name: string, src: GpuTensor, length: number) => {
      if (!captures) return;
      const dst = gpu.alloc("f32", length, `capture ${name}`);
      this.#owned.push(dst);
      captures.set(name, dst);
      steps.copy(src, 0, dst, 0, length);
    };

    const steps = new Steps();
    const z = s.b, zn = config.latentChannels * h * w;
    steps.run(axpyPlan(gpu, { n: zn, alpha: 1 / config.scalingFactor }), [this.latent, shift, z]);
    capture(steps, "z", z, zn);
    convSteps(steps, gpu, parts.convIn, h, w, z, x);
    capture(steps, "conv_in", x, top * h * w);
    const [r0, attention, r1] = parts.mid;
    resnetSteps(steps, gpu, r0, h, w, x, s);
    capture(steps, "mid.resnet0", x, top * h * w);
    midAttentionSteps(steps, gpu, attention, h * w, x, s, att);
    capture(steps, "mid.attn", x, top * h * w);
    resnetSteps(steps, gpu, r1, h, w, x, s);
    capture(steps, "mid", x, top * h * w);
    H = h;
    W = w;
    parts.up.forEach((block, i) => {
      for (const r of block.resnets) resnetSteps(steps, gpu, r, H, W, x, s);
      const c = channels[i];
      if (block.upsample) {
        // The upsampled map passes through s.a, free between resnets: no fourth map-sized buffer (at 1024²
        // each is 1 GiB, 256 channels at full size).
        steps.run(nearestUpsample2dPlan(gpu, { N: 1, C: c, H, W, outH: 2 * H, outW: 2 * W }), [x, s.a]);
        H *= 2;
        W *= 2;
        convSteps(steps, gpu, block.upsample, H, W, s.a, x);
      }
      capture(steps, `up.${i}`, x, c * H * W);
    });
    const last = channels[channels.length - 1];
    groupNormSteps(steps, gpu, parts.normOut, H * W, x, s.a, s);
    siluSteps(steps, gpu, last * H * W, s.a, s.b);
    capture(steps, "pre_conv_out", s.b, last * H * W);
    convSteps(steps, gpu, parts.convOut, H, W, s.b, this.decoded);
    this.#recording = new Recording(gpu, "z-image vae decode", steps.list);
  }

  /**
   * Records the decoder into `encoder`, for a caller that submits it.
   *
   * @param encoder the command encoder
   */
  encode(encoder: GPUCommandEncoder): void {
    this.#recording.encode(encoder);
  }

  /** Runs the decoder on {@link latent}. */
  async run(): Promise<void> {
    await this.#recording.run();
  }

  /** Frees the run's tensors and recording. */
  destroy(): void {
    this.#recording.destroy();
    for (const t of this.#owned) t.buffer.destroy();
  }
}
