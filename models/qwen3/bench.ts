/**
 * Deno only (a CLI): times the Qwen3 encoder at a real model's shape on the adapter present, with
 * seeded random weights made tensor by tensor as they load (no checkpoint needed), and writes the
 * figures as JSON (the `baselines/<card>.json` a README figure must come from).
 *
 *     deno run -A models/qwen3/bench.ts [--shape 4b|0.6b|tiny] [--format f32|q8] [--tokens 512] [--samples 10]
 *                                       [--out models/qwen3/baselines/<card>.json]
 *
 * `4b` is Z-Image's text encoder (Qwen3-4B, `hidden_states[-2]`: 35 of 36 layers, no final norm),
 * `0.6b` Anima's (Qwen3-0.6B, `last_hidden_state`); `tiny` is for the test that runs this script. One encode of `--tokens` ids is the unit: the
 * program replayed (`encodeResident`), timed by wall clock from the ids' write to the queue's
 * completion (so submission and the completion's latency are in it); median of `--samples` after 3
 * untimed runs.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { acquireDevice } from "../../harness/device.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { syntheticStore } from "../synthetic_store.ts";
import { parseQwen3Config, type Qwen3Config } from "./config.ts";
import { Qwen3Encoder } from "./encoder.ts";
import type { Qwen3Format } from "./linear.ts";
import { qwen3Tensors } from "./weights.ts";

/** The two models the image pipelines use: their config.json keys, and the hidden state each takes. */
const SHAPES: Record<string, { config: Record<string, unknown>; hiddenState: number; what: string }> = {
  "4b": {
    what: "Qwen3-4B, Z-Image's text encoder",
    hiddenState: -2,
    config: {
      hidden_size: 2560,
      intermediate_size: 9728,
      num_hidden_layers: 36,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      head_dim: 128,
      vocab_size: 151936,
      rope_theta: 1e6,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: true,
    },
  },
  tiny: {
    what: "a tiny Qwen3 (the test's; no figure of it means anything)",
    hiddenState: -2,
    config: {
      hidden_size: 64,
      intermediate_size: 96,
      num_hidden_layers: 3,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 32,
      vocab_size: 300,
      rope_theta: 1e6,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: true,
    },
  },
  "0.6b": {
    what: "Qwen3-0.6B, Anima's text encoder",
    hiddenState: -1,
    config: {
      hidden_size: 1024,
      intermediate_size: 3072,
      num_hidden_layers: 28,
      num_attention_heads: 16,
      num_key_value_heads: 8,
      head_dim: 128,
      vocab_size: 151936,
      rope_theta: 1e6,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: true,
    },
  },
};

/**
 * A checkpoint of `config`'s tensors (`model.` names, F32) whose values are made when read: uniform in
 * ±sqrt(3 / fan_in) for matrices, ±0.1 for the embedding, 1 for norms, seeded per tensor.
 */
function syntheticWeights(config: Qwen3Config): TensorStore {
  return syntheticStore(
    qwen3Tensors(config).map(({ name, shape }) => ({ name: `model.${name}`, shape })),
    (name, shape) =>
      shape.length === 1
        ? { center: 1, half: 0 }
        : { center: 0, half: name.includes("embed_tokens") ? 0.1 : Math.sqrt(3 / shape[1]) },
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      shape: { type: "string", default: "4b" },
      format: { type: "string", default: "f32" },
      tokens: { type: "string", default: "512" },
      samples: { type: "string", default: "10" },
      out: { type: "string" },
    },
  });
  const shape = SHAPES[values.shape!];
  if (!shape) throw new Error(`--shape must be one of ${Object.keys(SHAPES).join(", ")}, got ${values.shape}`);
  const format = values.format as Qwen3Format;
  if (format !== "f32" && format !== "q8") throw new Error(`--format must be f32 or q8, got ${format}`);
  const tokens = Number(values.tokens), samples = Number(values.samples);
  if (!Number.isInteger(tokens) || tokens < 1) {
    throw new Error(`--tokens must be an integer >= 1, got ${values.tokens}`);
  }
  if (!Number.isInteger(samples) || samples < 1) {
    throw new Error(`--samples must be an integer >= 1, got ${values.samples}`);
  }
  const config = parseQwen3Config(shape.config);
  const gpu = await acquireDevice();
  console.error(`adapter: ${gpu.adapter.description}; ${shape.what}, ${format}, ${tokens} tokens`);
  const loadStart = performance.now();
  let shown = -1;
  const encoder = await Qwen3Encoder.load(gpu, syntheticWeights(config), config, {
    format,
    hiddenState: shape.hiddenState,
    onProgress: (done, total) => {
      const pct = Math.floor((100 * done) / total);
      if (pct >= shown + 10) console.error(`loading: ${(shown = pct)}%`);
    },
  });
  const loadS = (performance.now() - loadStart) / 1000;
  const ids = Array.from({ length: tokens }, (_, i) => (i * 7919 + 13) % config.vocabSize);
  for (let i = 0; i < 3; i++) await encoder.encodeResident(ids);
  await gpu.device.queue.onSubmittedWorkDone();
  const wallMs: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t = performance.now();
    await encoder.encodeResident(ids);
    await gpu.device.queue.onSubmittedWorkDone();
    wallMs.push(performance.now() - t);
  }
  const result = {
    date: new Date().toISOString(),
    deno: Deno.version.deno,
    adapter: gpu.adapter.description,
    model: shape.what,
    config: shape.config,
    hiddenState: shape.hiddenState,
    format,
    tokens,
    samples,
    loadSeconds: loadS,
    weightBytes: encoder.weightBytes,
    programBytes: encoder.programBytes,
    wallMs,
    wallMedianMs: median(wallMs),
  };
  console.log(`${shape.what}, ${format}, ${tokens} tokens: ${result.wallMedianMs.toFixed(2)} ms (median wall clock)`);
  if (values.out) await Deno.writeTextFile(values.out, JSON.stringify(result, null, 2) + "\n");
  encoder.destroy();
  gpu.destroy();
}
