/**
 * Anima at its real sizes, timed on this machine's adapter (Deno CLI; reads no checkpoint): the
 * DiT (28 or 52 blocks) for one sampling step at a 1024 x 1024 image (a 128 x 128 latent, 4096
 * tokens, 512 context rows), batch 2 (the two CFG passes, as the pipeline runs them) and batch 1
 * (one forward, what the oracle's `timing.py` times in torch); the LLM adapter on 512 T5 ids x 512
 * Qwen rows; the VAE decoder at the same latent. The weights are seeded random values with the
 * checkpoints' names and shapes, loaded through the same loaders (layout checks included), f32.
 *
 * `--stream` times the DiT with its blocks streamed through two slots (wall clock of whole forwards,
 * the block uploads included). Each other figure is harness/timing's `timeProgram`: the median GPU
 * time (timestamps from the start of the program's pass to its end) of `--samples` (at least 5)
 * runs after a warm-up run and the clock warm-up, with the dispatch count and the host time to
 * encode one run. `--q8` loads the DiT's block products as int8 codes.
 *
 * `deno run -A models/anima/bench.ts [--blocks 28|52] [--size 1024] [--text 512] [--samples 5] [--q8] [--stream]`
 * prints JSON (`--blocks 1 --size 64 --text 16` is a quick smoke run).
 * Torch 2.11 fp32 (TF32 off) on one H100, from the oracle's timing.json: DiT 52 blocks batch 1
 * 742.8 ms, adapter 7.1 ms, VAE 417.3 ms (its conv3d over 3 frames; a one-frame conv2d does a
 * third of those FLOPs).
 *
 * @module
 */

import { acquireDevice, type ResidentDevice } from "../../harness/device.ts";
import { timeProgram as timeHarness } from "../../harness/timing.ts";
import type { Program } from "../../harness/program.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import type { ExpectedTensor } from "../../llm/weights/checkpoint.ts";
import { syntheticStore } from "../synthetic_store.ts";
import { LlmAdapter } from "./adapter.ts";
import {
  type AdapterConfig,
  CONTEXT_ROWS,
  type DitConfig,
  ditRopeSplit,
  type VaeConfig,
  WAN_LATENTS_MEAN,
  WAN_LATENTS_STD,
} from "./config.ts";
import { AnimaDit } from "./dit.ts";
import { Graph } from "./graph.ts";
import { sequencePositions } from "./rope.ts";
import { timestepSinusoid } from "./timestep.ts";
import { AnimaVae } from "./vae.ts";
import { adapterLayout, ditLayout, vaeLayout } from "./weights.ts";

function arg(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}

/** Seeded weights of a layout's names and shapes: norms near 1, weights within ±sqrt(3 / fan-in). */
function syntheticWeights(layout: readonly ExpectedTensor[]): TensorStore {
  return syntheticStore(
    layout,
    (_, shape) =>
      shape.length === 1 || shape.slice(1).every((d) => d === 1)
        ? { center: 1, half: 0.1 }
        : { center: 0, half: Math.sqrt(3 / shape.slice(1).reduce((p, d) => p * d, 1)) },
  );
}

/** A program's GPU time (harness/timing's timeProgram), its dispatch count and host encode time. */
async function timeProgram(
  gpu: ResidentDevice,
  program: Program,
  samples: number,
): Promise<{ ms: number; samplesMs: number[]; dispatches: number; encodeUs: number }> {
  const timing = await timeHarness(gpu, program, { samples, warmup: 1 });
  const t0 = performance.now();
  for (let i = 0; i < 5; i++) program.encode(gpu.device.createCommandEncoder());
  const encodeUs = (performance.now() - t0) * 1000 / 5;
  return { ms: timing.ms, samplesMs: timing.samplesMs, dispatches: program.steps.length, encodeUs };
}

/** Runs the bench with the command line's options and prints the JSON report. */
async function main(): Promise<void> {
  const format = Deno.args.includes("--q8") ? "q8" : "f32";
  const stream = Deno.args.includes("--stream");
  const blocks = arg("blocks", 28),
    size = arg("size", 1024),
    samples = Math.max(5, arg("samples", 5)),
    textLength = arg("text", 512);
  const gpu = await acquireDevice();
  if (!gpu.device.features.has("timestamp-query")) throw new Error("anima bench: the device has no timestamp-query");
  const latent = size / 8;
  const headDim = 128;
  const { dims, theta } = ditRopeSplit(headDim);
  const ditConfig: DitConfig = {
    blocks,
    dim: 2048,
    heads: 16,
    headDim,
    contextDim: 1024,
    adalnLoraDim: 256,
    mlpDim: 8192,
    channels: 16,
    patch: 2,
    ropeDims: dims,
    ropeTheta: theta,
    contextRows: CONTEXT_ROWS,
  };
  const adapterConfig: AdapterConfig = {
    layers: 6,
    sourceDim: 1024,
    targetDim: 1024,
    modelDim: 1024,
    heads: 16,
    headDim: 64,
    mlpDim: 4096,
    vocab: 32128,
    inProj: false,
  };
  const vaeConfig: VaeConfig = {
    dim: 96,
    zDim: 16,
    dimMult: [1, 2, 4, 4],
    numResBlocks: 2,
    latentsMean: WAN_LATENTS_MEAN,
    latentsStd: WAN_LATENTS_STD,
  };
  const report: Record<string, unknown> = {
    adapter: gpu.adapter,
    deno: Deno.version.deno,
    date: new Date().toISOString(),
    image: `${size} x ${size}`,
    ditFormat: format,
    ditStreamed: stream,
  };

  // DiT: one step (forward; batch 2 with the guided Euler update is what the pipeline runs).
  {
    const t0 = performance.now();
    const dit = await AnimaDit.load(gpu, syntheticWeights(ditLayout(ditConfig)), { format, stream });
    report.ditLoadMs = performance.now() - t0;
    report.ditWeightBytes = dit.residentBytes;
    for (const batch of [2, 1]) {
      const g = new Graph(gpu, `anima DiT bench ${batch}`);
      const x = gpu.upload(new Float32Array(16 * latent * latent).fill(0.5));
      const sinusoid = gpu.upload(timestepSinusoid(0.7, ditConfig.dim));
      const context = gpu.upload(new Float32Array(batch * CONTEXT_ROWS * 1024).fill(0.01));
      const geometry = dit.geometry(latent, latent, batch);
      dit.build(g, { batch, height: latent, width: latent, latent: x, sinusoid, context }, geometry);
      const program = g.program();
      const timing = await timeProgram(gpu, program, samples);
      report[`dit${blocks}_batch${batch}`] = {
        ...timing,
        scratchBytes: g.scratchBytes,
        tflops: program.cost.flops / timing.ms / 1e9,
      };
      program.destroy();
      g.destroy();
      for (const t of [x, sinusoid, context, geometry.patchIndex, geometry.positions]) t.buffer.destroy();
    }
    dit.destroy();
  }

  // The adapter at 512 T5 ids x 512 Qwen rows.
  {
    const store = syntheticWeights(adapterLayout(adapterConfig));
    const adapter = await LlmAdapter.load(gpu, store);
    const g = new Graph(gpu, "anima adapter bench");
    const inputs = {
      ids: gpu.upload(Int32Array.from({ length: textLength }, (_, i) => (i * 7919) % 32128)),
      source: gpu.upload(new Float32Array(textLength * 1024).fill(0.1)),
      targetPositions: gpu.upload(sequencePositions(textLength)),
      sourcePositions: gpu.upload(sequencePositions(textLength)),
    };
    adapter.build(g, inputs);
    const program = g.program();
    report[`adapter${textLength}`] = await timeProgram(gpu, program, samples);
    program.destroy();
    g.destroy();
    for (const t of Object.values(inputs)) t.buffer.destroy();
    adapter.destroy();
  }

  // The VAE decoder at the same latent.
  {
    const vae = await AnimaVae.load(gpu, syntheticWeights(vaeLayout(vaeConfig)));
    const g = new Graph(gpu, "anima VAE bench");
    const z = gpu.upload(new Float32Array(16 * latent * latent).fill(0.2));
    vae.build(g, z, latent, latent);
    const program = g.program();
    report.vae = { ...await timeProgram(gpu, program, samples), scratchBytes: g.scratchBytes };
    program.destroy();
    g.destroy();
    z.buffer.destroy();
    vae.destroy();
  }

  console.log(JSON.stringify(report, null, 1));
  gpu.destroy();
}

if (import.meta.main) await main();
