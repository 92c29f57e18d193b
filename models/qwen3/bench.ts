/**
 * Deno only (a CLI): Qwen3's speed at a real model's shape on the adapter present, with seeded random
 * weights made tensor by tensor as they load (`models/synthetic_store.ts`; no checkpoint needed). One
 * row of figures per shape and format, in the row format of `harness/baselines/<card>-llm.json`
 * (bench:llm's, `llm/bench.ts`: `{ format, prefill: { wallTokPerS, ... }, decode: { wallTokPerS, ... } }`)
 * with `shape` naming the model and an `encoder` entry beside them:
 *
 *     deno run -A models/qwen3/bench.ts [--shape 0.6b,4b] [--format f32,q8] [--mode encoder,generate]
 *         [--tokens 512] [--decode 256] [--read-every 16] [--in-flight 4] [--samples 10] [--out rows.json]
 *         [--merge-into harness/baselines/<card>-llm.json] [--profile DIR]
 *     deno run -A models/qwen3/bench.ts --merge-only rows.json --merge-into harness/baselines/<card>-llm.json
 *
 * The defaults measure every row: both shapes, both formats, encoder and generation. `0.6b` is Qwen3-0.6B
 * (Anima's text encoder, `last_hidden_state`: 28 layers and the final norm), `4b` Qwen3-4B (Z-Image's,
 * `hidden_states[-2]`: 35 of its 36 layers, no final norm; the causal LM runs all 36); `tiny` is for the
 * test that runs this script, and its rows are refused by the merge. Progress goes to stderr, a line of
 * figures per row to stdout; `--out` writes `{ bench, date, adapter, runtime, rows }` after each row, so a
 * run cut short keeps what it measured.
 *
 * Per row (the model loaded once for the encoder, then once as `Qwen3ForCausalLM`, one after the other):
 * - `encoder`: one encode of `--tokens` ids (`Qwen3Encoder`, its program replayed). By wall clock, from
 *   the ids' write to the queue's completion, median of `--samples` after 3 untimed runs; and by GPU
 *   timestamps around the program alone (`timeProgram` on `encoder.prepare(ids)`), median of at least 5
 *   after 2 untimed runs.
 * - `prefill` and `decode`: measured as bench:llm measures the Llama engine, so the figures compare.
 *   Prefill by wall clock = `--tokens` / (a generation of one token from a `--tokens` prompt: its call to
 *   its token, the read-back included), median of 3; decode by wall clock = `--decode` / (the first token
 *   to the last of a generation of `--decode` + 1 tokens). Both after a warm-up generation that compiles
 *   every pipeline. `generate` builds its programs on every call, so the prefill's wall clock includes
 *   that build (`prefill.prepareMs`: `prepare` alone, median of 3). GPU time by timestamps around each
 *   program of one generation (`Qwen3ForCausalLM.prepare`): the prefill program, and the decode program
 *   from the position after the prompt on, a position further each run (it attends over the cache's
 *   whole capacity, masked, so every position costs the same), median of at least 5 after 2 untimed
 *   runs each.
 * - The decode loop is kept on the GPU (`decode.loop` says so in the row): each step's greedy choice is made
 *   by ops/sample's argmax and read by the next step's embedding gather, the steps are submitted back to
 *   back, and the ids come back `--read-every` at a time with `--in-flight` readbacks outstanding
 *   (`decode.readEvery`, `decode.inFlight`; `Qwen3ForCausalLM.generate`'s defaults, 16 and 4).
 *   `decode.dispatches` counts a decode step's dispatches.
 * - `weightBytes` (the causal LM's), `loadMs`, and `peakBytes` (`gpu.memory`'s peak while each was
 *   loaded and measured); no stop id ends a generation.
 *
 * `--merge-into` merges the rows into a `<card>-llm.json` ({@link mergeLlmRows}): a row replaces the one
 * of the same shape and format, others are appended, and the file's other rows (Sarashina2.2-1B's, named
 * by the file's top-level `shape`) keep their text byte for byte. With `--merge-only`, a rows file an
 * earlier run wrote with `--out` is merged and nothing is measured.
 *
 * Most of a run's time is making and loading the synthetic weights: four loads per shape (the encoder and
 * the causal LM, f32 and q8), each of about 16 GB of f32 values at Qwen3-4B and 2.4 GB at Qwen3-0.6B, made
 * on the host (q8 ones are then quantised on the GPU). The shapes may be
 * run apart (`--shape 0.6b`, `--shape 4b`), each merging its own rows.
 *
 * Against torch: the oracle's Z-Image timing runs `Qwen3Model` whole (36 layers, `output_hidden_states`)
 * on 512 tokens, Anima's `Qwen3Model` (28 layers, `last_hidden_state`); the encoder row of Qwen3-4B
 * computes the 35 layers Z-Image uses (`encoder.layers`).
 *
 * @module
 */

import { acquireDevice, type ResidentDevice } from "../../harness/device.ts";
import { supportsTimestamps, timeProgram } from "../../harness/timing.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { listOption, writeProfile } from "../bench_rows.ts";
import { numberFlag, parseCliFlags } from "../cli.ts";
import { syntheticStore } from "../synthetic_store.ts";
import { Qwen3ForCausalLM } from "./causal_lm.ts";
import { parseQwen3Config, type Qwen3Config } from "./config.ts";
import { Qwen3Encoder } from "./encoder.ts";
import type { Qwen3Format } from "./linear.ts";
import { qwen3Tensors } from "./weights.ts";

/** A shape: its config.json keys, the name its rows carry, and the hidden state its encoder returns. */
interface Shape {
  name: string;
  what: string;
  hiddenState: number;
  config: Record<string, unknown>;
}

const SHAPES: Record<string, Shape> = {
  "0.6b": {
    name: "Qwen3-0.6B",
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
  "4b": {
    name: "Qwen3-4B",
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
    name: "tiny",
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
};

/** The shapes whose rows may go into a card's baseline. */
export const BASELINE_SHAPES: readonly string[] = ["Qwen3-0.6B", "Qwen3-4B"];

const MODES = ["encoder", "generate"] as const;
type Mode = typeof MODES[number];

/** The encoder's figures. */
export interface EncoderFigures {
  tokens: number;
  /** transformers' hidden-state index returned, and the decoder layers that computes. */
  hiddenState: number;
  layers: number;
  wallMs: number;
  wallSamplesMs: number[];
  gpuMs: number | null;
  gpuSamplesMs: number[] | null;
  weightBytes: number;
  programBytes: number;
  loadMs: number;
  peakBytes: number;
}

/** One shape and format's figures: a row of a `<card>-llm.json`. */
export interface Qwen3BenchRow {
  format: Qwen3Format;
  /** The model shape ("Qwen3-0.6B", "Qwen3-4B"; "tiny" for the test). */
  shape: string;
  bench: "models/qwen3/bench.ts";
  date: string;
  adapter: string;
  runtime: string;
  config: Record<string, unknown>;
  /** The causal LM's weights on the GPU (null without the generate mode). */
  weightBytes: number | null;
  loadMs: number | null;
  peakBytes: number | null;
  prefill: {
    tokens: number;
    wallMs: number;
    wallTokPerS: number;
    gpuMs: number | null;
    gpuTokPerS: number | null;
    prepareMs: number;
  } | null;
  decode: {
    tokens: number;
    wallTokPerS: number;
    gpuMsPerToken: number | null;
    gpuTokPerS: number | null;
    cacheCapacity: number;
    dispatches: number;
    readEvery: number;
    inFlight: number;
    loop: string;
  } | null;
  encoder: EncoderFigures | null;
}

const DECODE_LOOP = "gpu: each step's argmax (ops/sample) chosen on the GPU and read by the next step's " +
  "embedding gather, steps submitted back to back, ids read back in groups";

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

/** Progress as loading advances, a line per tenth. */
function loadProgress(label: string): (done: number, total: number) => void {
  let shown = -1;
  return (done, total) => {
    const pct = Math.floor((100 * done) / total);
    if (pct >= shown + 10) console.error(`${label}: loading ${(shown = pct)}%`);
  };
}

async function measureEncoder(
  gpu: ResidentDevice,
  shape: Shape,
  config: Qwen3Config,
  format: Qwen3Format,
  ids: number[],
  samples: number,
  profile?: string,
): Promise<EncoderFigures> {
  const label = `${shape.name} ${format} encoder`;
  gpu.resetPeakMemory();
  const t0 = performance.now();
  const encoder = await Qwen3Encoder.load(gpu, syntheticWeights(config), config, {
    format,
    hiddenState: shape.hiddenState,
    onProgress: loadProgress(label),
  });
  try {
    const loadMs = performance.now() - t0;
    console.error(`${label}: loaded in ${(loadMs / 1000).toFixed(1)} s; ${ids.length} tokens by wall clock`);
    for (let i = 0; i < 3; i++) await encoder.encodeResident(ids);
    await gpu.device.queue.onSubmittedWorkDone();
    const wallSamplesMs: number[] = [];
    for (let i = 0; i < samples; i++) {
      const t = performance.now();
      await encoder.encodeResident(ids);
      await gpu.device.queue.onSubmittedWorkDone();
      wallSamplesMs.push(performance.now() - t);
    }
    // The program alone on the GPU: timestamps from the start of its pass to its end, clocks warmed.
    const program = supportsTimestamps(gpu) ? await encoder.prepare(ids) : null;
    const gpuTime = program ? await timeProgram(gpu, program, { samples: Math.max(5, samples), warmup: 2 }) : null;
    if (program && profile) {
      const what = `${shape.name}-${format}-encoder`;
      await writeProfile(gpu, what, [program], `${profile}/qwen3-${what}.json`);
    }
    return {
      tokens: ids.length,
      hiddenState: shape.hiddenState,
      layers: Math.min(encoder.hiddenState, config.numHiddenLayers),
      wallMs: median(wallSamplesMs),
      wallSamplesMs,
      gpuMs: gpuTime?.ms ?? null,
      gpuSamplesMs: gpuTime?.samplesMs ?? null,
      weightBytes: encoder.weightBytes,
      programBytes: encoder.programBytes,
      loadMs,
      peakBytes: gpu.memory.peakBytes,
    };
  } finally {
    encoder.destroy();
  }
}

/** Drains a generation, noting the time each id arrives. */
async function drain(it: AsyncIterable<number>, times?: number[]): Promise<number[]> {
  const ids: number[] = [];
  for await (const id of it) {
    times?.push(performance.now());
    ids.push(id);
  }
  return ids;
}

async function measureGeneration(
  gpu: ResidentDevice,
  shape: Shape,
  config: Qwen3Config,
  format: Qwen3Format,
  prompt: number[],
  decode: number,
  ring: { readEvery: number; inFlight: number },
  samples: number,
): Promise<Pick<Qwen3BenchRow, "weightBytes" | "loadMs" | "peakBytes" | "prefill" | "decode">> {
  const label = `${shape.name} ${format} causal LM`;
  gpu.resetPeakMemory();
  const t0 = performance.now();
  const lm = await Qwen3ForCausalLM.load(gpu, syntheticWeights(config), config, {
    format,
    onProgress: loadProgress(label),
  });
  try {
    const loadMs = performance.now() - t0;
    const P = prompt.length, stopIds: number[] = [];
    console.error(`${label}: loaded in ${(loadMs / 1000).toFixed(1)} s; compiling (a short generation of each size)`);
    await drain(lm.generate(prompt, { maxTokens: 1, stopIds }));
    let warm = 0; // two ids: the prefill and one decode step at the decode run's capacity
    for await (const _ of lm.generate(prompt, { maxTokens: decode + 1, stopIds })) if (++warm === 2) break;
    console.error(`${label}: prefill of ${P} tokens by wall clock, 3 runs`);
    const prefillWall: number[] = [], prepareMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      await drain(lm.generate(prompt, { maxTokens: 1, stopIds }));
      prefillWall.push(performance.now() - t);
    }
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      const g = lm.prepare(prompt, 1);
      prepareMs.push(performance.now() - t);
      g.destroy();
    }
    console.error(`${label}: ${decode} decode steps by wall clock`);
    const times: number[] = [];
    const generated = await drain(lm.generate(prompt, { maxTokens: decode + 1, stopIds, ...ring }), times);
    if (generated.length !== decode + 1) throw new Error(`${label}: ${generated.length} ids, not ${decode + 1}`);
    const decodeWallMs = times[times.length - 1] - times[0];
    let gpuPrefill: number | null = null, gpuDecode: number | null = null;
    const capacity = P + decode;
    const g = lm.prepare(prompt, decode + 1);
    const dispatches = g.decode.steps.length;
    try {
      if (supportsTimestamps(gpu)) {
        console.error(`${label}: GPU time of the prefill and of a decode step`);
        const options = { samples: Math.max(5, samples), warmup: 2 };
        gpuPrefill = (await timeProgram(gpu, g.prefill, options)).ms;
        // From the first decode step's input, at the position after the prompt (each run goes on one position).
        g.feed(generated[0], P);
        gpuDecode = (await timeProgram(gpu, g.decode, options)).ms;
      }
    } finally {
      g.destroy();
    }
    const prefillMs = median(prefillWall);
    return {
      weightBytes: lm.weightBytes,
      loadMs,
      peakBytes: gpu.memory.peakBytes,
      prefill: {
        tokens: P,
        wallMs: prefillMs,
        wallTokPerS: P / (prefillMs / 1000),
        gpuMs: gpuPrefill,
        gpuTokPerS: gpuPrefill === null ? null : P / (gpuPrefill / 1000),
        prepareMs: median(prepareMs),
      },
      decode: {
        tokens: decode,
        wallTokPerS: decode / (decodeWallMs / 1000),
        gpuMsPerToken: gpuDecode,
        gpuTokPerS: gpuDecode === null ? null : 1000 / gpuDecode,
        cacheCapacity: capacity,
        dispatches,
        ...ring,
        loop: DECODE_LOOP,
      },
    };
  } finally {
    lm.destroy();
  }
}

/**
 * A `<card>-llm.json`'s text with `rows` merged in: each row replaces, in place, the row of the same
 * `shape` and `format`, or is appended; every other row and key is kept, so rows without a `shape`
 * (Sarashina2.2-1B's, named by the file's top-level `shape`) keep their text byte for byte. Written as
 * bench:llm writes the file (`JSON.stringify(result, null, 1)` and a newline).
 *
 * @param target the file's text, or null for a file not yet written (`{ "bench": "llm", "rows": [] }`)
 * @param rows the rows to merge, each of a shape in {@link BASELINE_SHAPES}
 * @returns the new text
 * @throws Error naming the target that holds no `rows` array, or a row whose shape or format is not a baseline's
 *
 * @example
 * ```ts
 * import { mergeLlmRows } from "./bench.ts";
 * const before = JSON.stringify({ bench: "llm", shape: "Sarashina2.2-1B", rows: [{ format: "q8" }] }, null, 1) + "\n";
 * const row = { format: "q8", shape: "Qwen3-4B", prefill: { wallTokPerS: 1 }, decode: { wallTokPerS: 1 } };
 * JSON.parse(mergeLlmRows(before, [row])).rows.length; // 2: Sarashina's q8 row, then Qwen3-4B's
 * ```
 */
export function mergeLlmRows(target: string | null, rows: readonly { shape?: unknown; format?: unknown }[]): string {
  const file = target === null ? { bench: "llm", rows: [] } : JSON.parse(target);
  if (typeof file !== "object" || file === null || !Array.isArray(file.rows)) {
    throw new Error("the file to merge into must be a JSON object with a rows array (a <card>-llm.json)");
  }
  const merged: Record<string, unknown>[] = file.rows;
  for (const row of rows) {
    if (typeof row.shape !== "string" || !BASELINE_SHAPES.includes(row.shape)) {
      throw new Error(
        `only rows of ${BASELINE_SHAPES.join(" and ")} go into a baseline, got shape ${JSON.stringify(row.shape)}`,
      );
    }
    if (row.format !== "f32" && row.format !== "q8") {
      throw new Error(`a row's format must be f32 or q8, got ${JSON.stringify(row.format)}`);
    }
    const at = merged.findIndex((r) => r.shape === row.shape && r.format === row.format);
    if (at >= 0) merged[at] = { ...row };
    else merged.push({ ...row });
  }
  return JSON.stringify(file, null, 1) + "\n";
}

async function mergeInto(path: string, rows: readonly Qwen3BenchRow[]): Promise<void> {
  let text: string | null = null;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  await Deno.writeTextFile(path, mergeLlmRows(text, rows));
  console.error(`merged ${rows.length} rows into ${path}${text === null ? " (a new file)" : ""}`);
}

const fmt = (v: number | null, digits = 0) => v === null ? "-" : v.toFixed(digits);

const USAGE = `usage: deno run -A models/qwen3/bench.ts [options]     (the module doc says what each row measures)
  --shape LIST             of 0.6b,4b,tiny (default 0.6b,4b; tiny is for the tests and is refused by the merge)
  --format LIST            of f32,q8 (default f32,q8)
  --mode LIST              of encoder,generate (default encoder,generate)
  --tokens N               the encoder's and the prompt's ids (default 512)
  --decode N               decode steps (default 256)
  --read-every N           ids a decode readback brings back (default 16)
  --in-flight N            decode readbacks outstanding (default 4)
  --samples N              the encoder's wall-clock samples; GPU timings take at least 5 (default 10)
  --out PATH               write the rows here after each row (default: none)
  --merge-into PATH        merge the rows into this <card>-llm.json at the end (default: none)
  --merge-only PATH        merge the rows file PATH (an earlier --out) into --merge-into; measure nothing
  --profile DIR            also time each encoder dispatch alone: sums by kernel to stderr, every dispatch
                           to DIR/qwen3-<shape>-<format>-encoder.json
  --help                   this text
A line of figures per row goes to stdout, progress to stderr.`;

async function main(args: readonly string[]): Promise<void> {
  const flags = parseCliFlags(args, {
    valued: [
      "shape",
      "format",
      "mode",
      "tokens",
      "decode",
      "read-every",
      "in-flight",
      "samples",
      "out",
      "merge-into",
      "merge-only",
      "profile",
    ],
    required: [],
    usage: USAGE,
  });
  if (flags === "help") return console.log(USAGE);
  const mergeTarget = flags.get("merge-into"), mergeOnly = flags.get("merge-only"), out = flags.get("out");
  if (mergeOnly !== undefined) {
    if (mergeTarget === undefined) throw new Error("--merge-only needs --merge-into (the <card>-llm.json)");
    const { rows } = JSON.parse(await Deno.readTextFile(mergeOnly));
    if (!Array.isArray(rows)) throw new Error(`--merge-only: ${mergeOnly} holds no rows array`);
    return await mergeInto(mergeTarget, rows);
  }
  const shapes = listOption(flags.get("shape") ?? "0.6b,4b", "shape", Object.keys(SHAPES)).map((s) => SHAPES[s]);
  const formats = listOption(flags.get("format") ?? "f32,q8", "format", ["f32", "q8"]) as Qwen3Format[];
  const modes = listOption(flags.get("mode") ?? MODES.join(","), "mode", MODES) as Mode[];
  const count = (name: string, fallback: number) => numberFlag(flags, name, true, { min: 1 }) ?? fallback;
  const tokens = count("tokens", 512), decode = count("decode", 256);
  const samples = count("samples", 10);
  const ring = { readEvery: count("read-every", 16), inFlight: count("in-flight", 4) };
  if (mergeTarget !== undefined && shapes.some((s) => !BASELINE_SHAPES.includes(s.name))) {
    throw new Error(`--merge-into takes rows of ${BASELINE_SHAPES.join(" and ")} only (--shape 0.6b,4b)`);
  }
  const start = performance.now();
  const gpu = await acquireDevice();
  const runtime = `Deno ${Deno.version.deno}`;
  console.error(`adapter: ${gpu.adapter.description}; ${tokens} tokens, ${decode} decode steps, modes ${modes}`);
  const rows: Qwen3BenchRow[] = [];
  const result = {
    bench: "qwen3",
    date: new Date().toISOString(),
    adapter: gpu.adapter,
    runtime,
    elapsedSeconds: 0,
    rows,
  };
  for (const shape of shapes) {
    const config = parseQwen3Config(shape.config);
    const ids = Array.from({ length: tokens }, (_, i) => (i * 7919 + 13) % config.vocabSize);
    for (const format of formats) {
      const encoder = modes.includes("encoder")
        ? await measureEncoder(gpu, shape, config, format, ids, samples, flags.get("profile"))
        : null;
      const generation = modes.includes("generate")
        ? await measureGeneration(gpu, shape, config, format, ids, decode, ring, samples)
        : null;
      const row: Qwen3BenchRow = {
        format,
        shape: shape.name,
        bench: "models/qwen3/bench.ts",
        date: new Date().toISOString(),
        adapter: gpu.adapter.description,
        runtime,
        config: shape.config,
        weightBytes: generation?.weightBytes ?? null,
        loadMs: generation?.loadMs ?? null,
        peakBytes: generation?.peakBytes ?? null,
        prefill: generation?.prefill ?? null,
        decode: generation?.decode ?? null,
        encoder,
      };
      rows.push(row);
      result.elapsedSeconds = (performance.now() - start) / 1000;
      if (out) await Deno.writeTextFile(out, JSON.stringify(result, null, 1) + "\n");
      const e = row.encoder, p = row.prefill, d = row.decode;
      console.log(
        `${shape.name} ${format}: ` +
          (e ? `encoder ${e.tokens} tokens ${e.wallMs.toFixed(2)} ms wall, ${fmt(e.gpuMs, 2)} ms GPU; ` : "") +
          (p && d
            ? `prefill ${fmt(p.wallTokPerS)} tok/s wall (GPU ${fmt(p.gpuTokPerS)}); decode ${
              fmt(d.wallTokPerS, 1)
            } tok/s wall (GPU ${fmt(d.gpuMsPerToken, 3)} ms/token, ${d.dispatches} dispatches)`
            : ""),
      );
    }
  }
  console.error(`done in ${result.elapsedSeconds.toFixed(0)} s`);
  gpu.destroy();
  if (mergeTarget !== undefined) await mergeInto(mergeTarget, rows);
}

if (import.meta.main) {
  try {
    await main(Deno.args);
  } catch (e) {
    console.error(`qwen3 bench: ${(e as Error).message}`);
    Deno.exit(2);
  }
}
