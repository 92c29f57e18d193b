/**
 * The Wan 2.1 VAE decoder (`wan/modules/vae.py`'s `Decoder3d`, as `qwen_image_vae.safetensors`
 * stores it) for one frame, as a program of ops.
 *
 * - At one frame every `CausalConv3d` is a conv2d with the kernel's last temporal tap: the causal
 *   padding puts 2·p_t zero frames in front, so only the last tap meets data (the oracle checked all
 *   64 decoder convs). The weights are sliced so at load; the `time_conv` of the temporal
 *   upsamplers never runs on a first frame and is not read.
 * - Un-normalisation `z · std + mean` (16 Wan values) comes first, then `conv2` (1 x 1 x 1); the
 *   two are folded into one 1 x 1 conv at load (`W · diag(std)`, bias `b + W · mean`).
 * - `RMS_norm` is `F.normalize(x, dim=1) · √C · γ` (a channel L2 norm, `x / max(‖x‖₂, 1e-12)`,
 *   not an RMSNorm eps): ops/channel_norm, with the SiLU that follows it in residual blocks and the
 *   head fused.
 * - Residual block: `shortcut(x) + conv(SiLU(norm(conv(SiLU(norm(x))))))`, 3 x 3 convs, the
 *   shortcut a 1 x 1 conv where the width changes.
 * - Middle attention: one head over all H·W pixels; q, k, v are the 1 x 1 `to_qkv`'s channel
 *   thirds (loaded as three convs), scale 1/√C, then a 1 x 1 `proj` and the residual.
 * - Upsampler: nearest ×2 (nearest-exact equals nearest at exactly 2x), then a 3 x 3 conv halving
 *   the width.
 * - Head: norm, SiLU, 3 x 3 conv to RGB; the result is clamped to [−1, 1] as it is read back.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { copyToHost, type HostCopy } from "../../harness/host_copy.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { freeOnFailure } from "../loading.ts";
import { channelNormPlan } from "../../ops/channel_norm/mod.ts";
import { conv2dPlan } from "../../ops/conv/mod.ts";
import { nearestUpsample2dPlan } from "../../ops/upsample/mod.ts";
import { type VaeConfig, vaeConfigFromStore } from "./config.ts";
import type { Tap } from "./dit_block.ts";
import { Graph } from "./graph.ts";
import { add, addInPlace, attention, permute } from "./layers.ts";
import { checkVaeLayout, type VaeModule, vaeModules } from "./weights.ts";

/** A 2-D convolution's weights `[cout, cin, k, k]` and bias. */
interface Conv {
  cin: number;
  cout: number;
  k: number;
  weight: GpuTensor;
  bias: GpuTensor;
}

type Layer =
  | { kind: "conv"; name: string; conv: Conv }
  | { kind: "residual"; name: string; gamma1: GpuTensor; conv1: Conv; gamma2: GpuTensor; conv2: Conv; shortcut?: Conv }
  | { kind: "attention"; name: string; gamma: GpuTensor; q: Conv; k: Conv; v: Conv; proj: Conv }
  | { kind: "upsample"; name: string; conv: Conv }
  | { kind: "head"; name: string; gamma: GpuTensor; conv: Conv };

/**
 * A stored conv weight as a 2-D kernel: 5-D `[cout, cin, kt, k, k]` takes its last temporal tap,
 * 4-D `[cout, cin, k, k]` is taken as is; `rows` selects output channels.
 */
async function readConv(
  store: TensorStore,
  name: string,
  rows?: [number, number],
): Promise<{ w: Float32Array; b: Float32Array; cout: number; cin: number; k: number }> {
  const shape = store.info(`${name}.weight`).shape;
  const full = await store.readFloat32(`${name}.weight`);
  const [cout0, cin] = shape;
  const kt = shape.length === 5 ? shape[2] : 1;
  const k = shape[shape.length - 1];
  const [r0, r1] = rows ?? [0, cout0];
  const cout = r1 - r0, tap = k * k;
  const w = new Float32Array(cout * cin * tap);
  for (let o = 0; o < cout; o++) {
    for (let i = 0; i < cin; i++) {
      const from = (((r0 + o) * cin + i) * kt + (kt - 1)) * tap;
      w.set(full.subarray(from, from + tap), (o * cin + i) * tap);
    }
  }
  const b = (await store.readFloat32(`${name}.bias`)).slice(r0, r1);
  return { w, b, cout, cin, k };
}

function uploadConv(
  gpu: ResidentDevice,
  name: string,
  c: { w: Float32Array; b: Float32Array; cout: number; cin: number; k: number },
): Conv {
  return {
    cin: c.cin,
    cout: c.cout,
    k: c.k,
    weight: gpu.upload(c.w, `${name}.weight`),
    bias: gpu.upload(c.b, `${name}.bias`),
  };
}

/**
 * The decoder, its weights resident on the device.
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { AnimaVae } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const gpu = await acquireDevice();
 * const vae = await AnimaVae.load(gpu, await open("weights_vae"));
 * const rgb = await vae.run(new Float32Array(16 * 2 * 3), 2, 3); // [16, 2, 3] -> [3, 16, 24]
 * console.log(rgb.length); // 3 * 16 * 24
 * vae.destroy();
 * gpu.destroy();
 * ```
 */
export class AnimaVae {
  /** Its sizes. */
  readonly config: VaeConfig;
  readonly #gpu: ResidentDevice;
  readonly #layers: Layer[];

  private constructor(gpu: ResidentDevice, config: VaeConfig, layers: Layer[]) {
    this.#gpu = gpu;
    this.config = config;
    this.#layers = layers;
  }

  /**
   * Checks the VAE's tensors against its layout and uploads the decoder's, sliced to one frame.
   *
   * @param gpu the device
   * @param store the VAE checkpoint (`conv2.*`, `decoder.*`; an encoder half is ignored)
   * @returns the decoder
   * @throws Error naming every missing or mis-shaped tensor, before reading any
   */
  static async load(gpu: ResidentDevice, store: TensorStore): Promise<AnimaVae> {
    const config = vaeConfigFromStore(store);
    checkVaeLayout(store, config);
    // A load that fails halfway (a read, a device error) frees what it uploaded.
    return await freeOnFailure(async (keep) => {
      const conv = async (name: string, rows?: [number, number]) =>
        keep(uploadConv(gpu, name, await readConv(store, name, rows)));
      const gamma = async (name: string) => keep(gpu.upload(await store.readFloat32(name), name));
      const layers: Layer[] = [];
      for (const m of vaeModules(config) as VaeModule[]) {
        const p = m.prefix;
        if (m.kind === "conv" && p === "conv2.") {
          // z · std + mean, then conv2: W' = W · diag(std), b' = b + W · mean.
          const c = await readConv(store, "conv2");
          const z = config.zDim;
          const w = new Float32Array(z * z), b = new Float32Array(z);
          for (let o = 0; o < z; o++) {
            let bias = c.b[o];
            for (let i = 0; i < z; i++) {
              w[o * z + i] = c.w[o * z + i] * config.latentsStd[i];
              bias += c.w[o * z + i] * config.latentsMean[i];
            }
            b[o] = bias;
          }
          layers.push({ kind: "conv", name: "conv2", conv: keep(uploadConv(gpu, "conv2", { ...c, w, b })) });
        } else if (m.kind === "conv") {
          layers.push({ kind: "conv", name: p.slice(0, -1), conv: await conv(p.slice(0, -1)) });
        } else if (m.kind === "residual") {
          layers.push({
            kind: "residual",
            name: p.slice(0, -1),
            gamma1: await gamma(`${p}residual.0.gamma`),
            conv1: await conv(`${p}residual.2`),
            gamma2: await gamma(`${p}residual.3.gamma`),
            conv2: await conv(`${p}residual.6`),
            shortcut: m.cin !== m.cout ? await conv(`${p}shortcut`) : undefined,
          });
        } else if (m.kind === "attention") {
          const C = m.channels;
          layers.push({
            kind: "attention",
            name: p.slice(0, -1),
            gamma: await gamma(`${p}norm.gamma`),
            q: await conv(`${p}to_qkv`, [0, C]),
            k: await conv(`${p}to_qkv`, [C, 2 * C]),
            v: await conv(`${p}to_qkv`, [2 * C, 3 * C]),
            proj: await conv(`${p}proj`),
          });
        } else if (m.kind === "upsample") {
          layers.push({ kind: "upsample", name: p.slice(0, -1), conv: await conv(`${p}resample.1`) });
        } else {
          layers.push({
            kind: "head",
            name: "decoder.head",
            gamma: await gamma(`${p}0.gamma`),
            conv: await conv(`${p}2`),
          });
        }
      }
      return new AnimaVae(gpu, config, layers);
    });
  }

  /** Bytes of the decoder's weights on the device. */
  get residentBytes(): number {
    let bytes = 0;
    const count = (t?: GpuTensor | Conv) => {
      if (!t) return;
      if ("buffer" in t) bytes += 4 * t.length;
      else bytes += 4 * (t.weight.length + t.bias.length);
    };
    for (const l of this.#layers) {
      for (const v of Object.values(l)) if (typeof v === "object") count(v as GpuTensor | Conv);
    }
    return bytes;
  }

  /**
   * Appends the decoder to a graph.
   *
   * @param g the graph
   * @param z the normalised latent `[zDim, h, w]`
   * @param h latent height
   * @param w latent width
   * @param tap receives each module's output by its checkpoint name (`conv2`, `decoder.conv1`,
   *   `decoder.middle.2`, `decoder.upsamples.<i>`, `decoder.head`)
   * @returns the RGB planes before the clamp `[3, 8h, 8w]`
   */
  build(g: Graph, z: GpuTensor, h: number, w: number, tap?: Tap): GpuTensor {
    let x = z, H = h, W = w;
    for (const layer of this.#layers) {
      const input = x;
      x = g.scope(() => {
        if (layer.kind === "conv") return conv2d(g, layer.conv, input, H, W);
        if (layer.kind === "residual") {
          // Each intermediate goes back to the pool once read, and the shortcut is added into the second
          // convolution's output: three maps live at most beside the shortcut's (at 1024², 403 MB each).
          const short = layer.shortcut ? conv2d(g, layer.shortcut, input, H, W) : input;
          const n1 = channelNorm(g, input, layer.conv1.cin, H * W, layer.gamma1, true);
          const r1 = conv2d(g, layer.conv1, n1, H, W);
          g.release(n1);
          const n2 = channelNorm(g, r1, layer.conv2.cin, H * W, layer.gamma2, true);
          g.release(r1);
          const r2 = conv2d(g, layer.conv2, n2, H, W);
          g.release(n2);
          addInPlace(g, r2, short, r2.length);
          return r2;
        }
        if (layer.kind === "attention") {
          const C = layer.q.cout, L = H * W;
          const n = channelNorm(g, input, C, L, layer.gamma, false);
          const tokens = (c: Conv) => permute(g, conv2d(g, c, n, H, W), [C, L], [1, 0]);
          const o = attention(g, tokens(layer.q), tokens(layer.k), tokens(layer.v), { B: 1, H: 1, L, S: L, D: C });
          const p = conv2d(g, layer.proj, permute(g, o, [L, C], [1, 0]), H, W);
          return add(g, p, input, p.length);
        }
        if (layer.kind === "upsample") {
          const C = layer.conv.cin;
          const up = g.tensor(C * 4 * H * W);
          g.add(nearestUpsample2dPlan(g.gpu, { N: 1, C, H, W, outH: 2 * H, outW: 2 * W }), { x: input, out: up });
          return conv2d(g, layer.conv, up, 2 * H, 2 * W);
        }
        return conv2d(g, layer.conv, channelNorm(g, input, layer.conv.cin, H * W, layer.gamma, true), H, W);
      });
      if (layer.kind === "upsample") [H, W] = [2 * H, 2 * W];
      tap?.(layer.name, x);
      if (input !== z) g.release(input);
    }
    return x;
  }

  /**
   * Decodes a latent on host arrays.
   *
   * @param z the normalised latent `[zDim, h, w]` (what the DiT's sampler produces)
   * @param h latent height
   * @param w latent width
   * @returns RGB `[3, 8h, 8w]` clamped to [−1, 1]
   */
  async run(z: Float32Array, h: number, w: number): Promise<Float32Array> {
    if (!Number.isInteger(h) || !Number.isInteger(w) || h < 1 || w < 1 || z.length !== this.config.zDim * h * w) {
      throw new Error(`anima VAE: z must be [${this.config.zDim}, ${h}, ${w}], got ${z.length} values`);
    }
    const gpu = this.#gpu;
    const input = gpu.upload(z, "latent");
    const g = new Graph(gpu, "anima VAE");
    try {
      const out = this.build(g, input, h, w);
      const program = g.program();
      try {
        await program.run();
      } finally {
        program.destroy();
      }
      return clampImage(await gpu.read(out) as Float32Array);
    } finally {
      g.destroy();
      input.buffer.destroy();
    }
  }

  /**
   * Host copies of the weights (read back once), whose `restore` makes this decoder again by uploads
   * alone, with no checkpoint read.
   *
   * @returns the copy; `restore(gpu)` gives a new decoder of the same weights
   */
  hostCopy(): Promise<HostCopy<AnimaVae>> {
    const config = this.config;
    return copyToHost(this.#gpu, this.#layers, (layers, gpu) => new AnimaVae(gpu, config, layers));
  }

  /** Frees the decoder's weights. */
  destroy(): void {
    for (const l of this.#layers) {
      for (const v of Object.values(l)) {
        if (typeof v !== "object" || v === undefined) continue;
        if ("buffer" in v) (v as GpuTensor).buffer.destroy();
        else {
          (v as Conv).weight.buffer.destroy();
          (v as Conv).bias.buffer.destroy();
        }
      }
    }
  }
}

/**
 * `clamp(x, −1, 1)` of the decoder's output (Wan's `decode(...).clamp_(-1, 1)`), on the host.
 *
 * @param x the head's output
 * @returns `x`, clamped in place
 *
 * @example
 * ```ts
 * import { clampImage } from "@xpu/ops/models/anima";
 * clampImage(new Float32Array([-1.5, 0.25, 3])); // Float32Array [-1, 0.25, 1]
 * ```
 */
export function clampImage(x: Float32Array): Float32Array {
  for (let i = 0; i < x.length; i++) x[i] = Math.min(1, Math.max(-1, x[i]));
  return x;
}

function conv2d(g: Graph, c: Conv, x: GpuTensor, H: number, W: number): GpuTensor {
  const out = g.tensor(c.cout * H * W);
  const pad = (c.k - 1) / 2;
  const plan = conv2dPlan(g.gpu, {
    N: 1,
    Cin: c.cin,
    Cout: c.cout,
    H,
    W,
    kernelSize: [c.k, c.k],
    padding: [pad, pad],
    bias: true,
  });
  g.add(plan, { x, weight: c.weight, bias: c.bias, out });
  return out;
}

function channelNorm(g: Graph, x: GpuTensor, C: number, L: number, gamma: GpuTensor, silu: boolean): GpuTensor {
  const out = g.tensor(C * L);
  const plan = channelNormPlan(g.gpu, { N: 1, C, L, weight: true, ...(silu ? { activation: "silu" as const } : {}) });
  g.add(plan, { x, weight: gamma, bias: g.unused(), out });
  return out;
}
