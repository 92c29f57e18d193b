/**
 * Deno only (a benchmark): GPU time of Z-Image's DiT step and VAE decode at a real size, on synthetic
 * weights of Turbo's shapes (values do not change the work), as upstream's `timing.py` times torch:
 *
 *     deno run -A models/zimage/bench.ts [--format f32|q8|q4g128] [--size 1024] [--caption 512]
 *                                        [--samples 5] [--config turbo|tiny] [--layers N] [--json PATH]
 *
 * One DiT step is the recording `DitRun.step` submits (timestep path, modulation, both streams, the
 * main layers, the final layer, unpatchify; no Euler update): `--samples` steps are timed after two
 * untimed ones, each between two timestamp writes (empty compute passes before and after the step,
 * whose timestamps land when the work before them has finished), and read back at the end, never
 * around a fence; the caption's context refiner runs once per caption and is timed apart. The VAE
 * decode of the same latent is timed the same way. Prints a JSON report (adapter, date, Deno, sizes,
 * medians and extremes in ms, dispatches, weight bytes) and writes it with `--json`. `--layers N` keeps
 * the config's widths with N main layers and one layer per refiner (a quick check of every kernel at
 * Turbo's widths; the figures then cover those layers only).
 *
 * @module
 */

import { acquireDevice, type ResidentDevice } from "../../harness/device.ts";
import { summarizeNs, supportsTimestamps, warmClocks } from "../../harness/timing.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { type ExpectedTensor, scopedStore } from "../../llm/weights/checkpoint.ts";
import { syntheticStore } from "../synthetic_store.ts";
import { parseDitConfig, parseVaeConfig, vaeScaleFactor, Z_IMAGE_TURBO, type ZImageConfig } from "./config.ts";
import { LINEAR_FORMATS, type LinearFormat } from "./linear.ts";
import { ditWeightBytes, ZImageDit } from "./transformer/dit.ts";
import { decoderTensors, VaeDecoder } from "./vae/decoder.ts";
import { ditTensors } from "./weights.ts";

/** The tiny config of the oracle's goldens (for a quick run on any adapter). */
const TINY: ZImageConfig = {
  dit: parseDitConfig({
    in_channels: 16,
    dim: 64,
    n_layers: 2,
    n_refiner_layers: 1,
    n_heads: 2,
    n_kv_heads: 2,
    norm_eps: 1e-5,
    cap_feat_dim: 32,
    rope_theta: 256,
    t_scale: 1000,
    axes_dims: [8, 12, 12],
  }),
  vae: parseVaeConfig({
    latent_channels: 16,
    out_channels: 3,
    block_out_channels: [32, 64],
    layers_per_block: 2,
    norm_num_groups: 8,
    scaling_factor: 0.3611,
    shift_factor: 0.1159,
  }),
};

/**
 * Seeded weights of the given tensors: 1-D weights are norms (around 1), other 1-D tensors biases, the
 * pad tokens unit-scale, the rest matrices and convolutions within ±sqrt(3 / fan_in), as the oracle's
 * recipe scales them.
 */
function syntheticWeights(expected: readonly ExpectedTensor[]): TensorStore {
  return syntheticStore(expected, (name, shape) => {
    const oneD = shape.length === 1;
    return {
      center: oneD && name.endsWith(".weight") ? 1 : 0,
      half: oneD ? 0.25 : name.includes("pad_token") ? 1 : Math.sqrt(3 / shape.slice(1).reduce((a, b) => a * b, 1)),
    };
  });
}

/** GPU time of `samples` submissions of `encode`, each between two timestamp writes, after two untimed ones. */
async function timeEncoded(
  gpu: ResidentDevice,
  samples: number,
  encode: (encoder: GPUCommandEncoder) => void,
): Promise<bigint[]> {
  const device = gpu.device;
  const querySet = device.createQuerySet({ type: "timestamp", count: 2 * samples });
  const resolve = device.createBuffer({
    size: 16 * samples,
    usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
  });
  const staging = device.createBuffer({ size: 16 * samples, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    for (let i = 0; i < 2; i++) {
      const encoder = device.createCommandEncoder();
      encode(encoder);
      device.queue.submit([encoder.finish()]);
    }
    await device.queue.onSubmittedWorkDone();
    await warmClocks(gpu);
    for (let i = 0; i < samples; i++) {
      const encoder = device.createCommandEncoder();
      encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i } }).end();
      encode(encoder);
      encoder.beginComputePass({ timestampWrites: { querySet, endOfPassWriteIndex: 2 * i + 1 } }).end();
      device.queue.submit([encoder.finish()]);
    }
    const encoder = device.createCommandEncoder();
    encoder.resolveQuerySet(querySet, 0, 2 * samples, resolve, 0);
    encoder.copyBufferToBuffer(resolve, 0, staging, 0, 16 * samples);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const ticks = new BigUint64Array(staging.getMappedRange().slice(0));
    return Array.from({ length: samples }, (_, i) => ticks[2 * i + 1] - ticks[2 * i]);
  } finally {
    querySet.destroy();
    resolve.destroy();
    staging.destroy();
  }
}

const round = (x: number) => Math.round(x * 1e3) / 1e3;
const stats = (ticks: bigint[]) => {
  const s = summarizeNs(ticks);
  return { medianMs: round(s.ms), minMs: round(s.msMin), maxMs: round(s.msMax) };
};

if (import.meta.main) {
  const flags = new Map<string, string>();
  const known = ["format", "size", "caption", "samples", "config", "layers", "json"];
  for (let i = 0; i < Deno.args.length; i += 2) {
    const name = Deno.args[i].replace(/^--/, "");
    if (!Deno.args[i].startsWith("--") || !known.includes(name) || i + 1 >= Deno.args.length) {
      throw new Error(`bad argument ${Deno.args[i]}: options are --${known.join(", --")}, each with a value`);
    }
    flags.set(name, Deno.args[i + 1]);
  }
  const format = (flags.get("format") ?? "f32") as LinearFormat;
  if (!LINEAR_FORMATS.includes(format)) throw new Error(`--format must be one of ${LINEAR_FORMATS.join(", ")}`);
  const base = flags.get("config") === "tiny" ? TINY : Z_IMAGE_TURBO;
  const layers = flags.has("layers") ? Number(flags.get("layers")) : undefined;
  if (layers !== undefined && !(Number.isInteger(layers) && layers >= 1)) throw new Error("--layers must be >= 1");
  const config: ZImageConfig = layers === undefined
    ? base
    : { ...base, dit: { ...base.dit, nLayers: layers, nRefinerLayers: 1 } };
  const size = Number(flags.get("size") ?? (base === TINY ? 32 : 1024));
  const capLen = Number(flags.get("caption") ?? (base === TINY ? 32 : 512));
  const samples = Number(flags.get("samples") ?? 5);
  const scale = vaeScaleFactor(config.vae), h = size / scale;
  if (!Number.isInteger(h) || h % 2 !== 0) throw new Error(`--size must be a multiple of ${2 * scale}`);

  const gpu = await acquireDevice();
  if (!supportsTimestamps(gpu)) throw new Error("the device has no timestamp-query: no GPU figure");
  const started = performance.now();
  const dit = await ZImageDit.load(gpu, syntheticWeights(ditTensors(config.dit)), config.dit, { format });
  const loadSeconds = (performance.now() - started) / 1000;
  const run = dit.prepare({ latentH: h, latentW: h, capLen });
  const fill = (n: number) =>
    Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37)) as Float32Array<ArrayBuffer>;
  gpu.device.queue.writeBuffer(run.capFeats.buffer, 0, fill(run.capFeats.length));
  gpu.device.queue.writeBuffer(run.latent.buffer, 0, fill(run.latent.length));
  const caption = await timeEncoded(gpu, samples, (encoder) => run.encodeCaptionInto(encoder));
  const step = await timeEncoded(gpu, samples, (encoder) => run.encodeStep(encoder, 0.5));
  const dispatches = run.dispatchesPerStep;
  run.destroy();
  dit.destroy();
  const vae = await VaeDecoder.load(
    gpu,
    scopedStore(
      syntheticWeights(
        decoderTensors(config.vae).map((t) => ({ name: `decoder.${t.name}`, shape: t.shape })),
      ),
      "decoder.",
    ),
    config.vae,
  );
  const decode = vae.prepare(h, h);
  gpu.device.queue.writeBuffer(decode.latent.buffer, 0, fill(decode.latent.length));
  const vaeTicks = await timeEncoded(gpu, samples, (encoder) => decode.encode(encoder));
  decode.destroy();
  vae.destroy();
  const report = {
    adapter: gpu.adapter.description || gpu.adapter.vendor,
    date: new Date().toISOString(),
    deno: Deno.version.deno,
    config: base === TINY ? "tiny" : "turbo",
    layers: { main: config.dit.nLayers, refiners: config.dit.nRefinerLayers },
    format,
    image: `${size}x${size}`,
    tokens: { image: (h / 2) ** 2, caption: capLen },
    ditWeightBytes: ditWeightBytes(config.dit, format),
    loadSeconds: Math.round(loadSeconds * 10) / 10,
    ditStep: { ...stats(step), dispatches },
    captionRefiner: stats(caption),
    vaeDecode: stats(vaeTicks),
    samples,
    timing: "GPU timestamps around each submission (empty passes before and after), median of samples after 2 untimed",
  };
  const text = JSON.stringify(report, null, 2);
  console.log(text);
  if (flags.has("json")) await Deno.writeTextFile(flags.get("json")!, text + "\n");
  gpu.destroy();
}
