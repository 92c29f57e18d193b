/**
 * Deno only (a benchmark): Anima's stages and whole images at real sizes on the adapter present, on
 * seeded random weights with the checkpoints' names and shapes, loaded through the same loaders
 * (layout checks included), written as the rows of `baselines/<card>.json` (models/bench_rows.ts):
 *
 *     deno run -A models/anima/bench.ts [--stages text-encoder,dit-step,vae-decode,total] [--blocks 28,52]
 *         [--sizes 512,1024] [--formats f32,q8] [--total-formats f32] [--text 512] [--samples 5]
 *         [--steps 50] [--cfg 3.5] [--warmup-steps 1] [--max-resident 4GiB] [--tokenizer DIR]
 *         [--prompt TEXT] [--torch LOG,...] [--json PATH] [--config real|tiny] [--profile DIR]
 *
 * Rows (each with `peakBytes`, the most bytes live in buffers on the device, `ResidentDevice.memory`):
 * - `text-encoder`: Qwen3-0.6B (`last_hidden_state`) on `--text` ids, then the LLM adapter on `--text`
 *   T5 ids over its states: both programs in one timed encoding (harness/timing.ts `timeEncoding`), one
 *   row per Qwen3 format the `--formats` name (the adapter is f32); `adapter` beside it, the adapter's
 *   program alone (`timeProgram`; its `peakBytes` is the text side's, Qwen3 live beside it). Width and
 *   height null: neither depends on the image.
 * - `dit-step-cfg` (batch 2: both CFG passes, as the pipeline runs a step) and `dit-step` (batch 1, what
 *   the oracle's `timing.py` times in torch), per `--blocks`, format and size: the DiT's program
 *   (`timeProgram`: timestamps from its pass's start to its end), 512 context rows, with its dispatch
 *   count, TFLOP/s and host encode time.
 * - `vae-decode` per size (format f32): the Wan 2.1 decoder of the latent.
 * - `total` per `--blocks`, `--total-formats` format and size: an image as `deno task anima` makes it:
 *   `Anima.load` at the default budget (`--max-resident`, 4 GiB: stages that do not fit together load
 *   in turn, a DiT over it streams its blocks), the Qwen3 encoder f32 loaded for the prompts and freed
 *   before the DiT (`onDemandTextEncoder`), `generate` of `--prompt` with the negative prompt "" at
 *   `--steps` steps and `--cfg`: `ms` is the wall clock of the second image, after an untimed one of
 *   `--warmup-steps` steps (the same stages, so every kernel is compiled). Each load a generation does
 *   is in it, as in a user's second image: staged, the stages and the text encoder come back from the
 *   host copies their first load left (`hostBytes`), by uploads alone; `weightReadMs` is the part spent
 *   making synthetic weights during the timed image (a file's reads would take its place: none once
 *   the copies exist); `firstStepMs`, `stepMs` (the median later step, each timed to its completion
 *   on the GPU) and `afterStepsMs` say where the rest went. The default prompt is about 540 Qwen3 tokens (512
 *   T5 ids after truncation), the size the stage rows time.
 *
 * Stage rows are taken with the stage resident (loaded whole, outside any budget); their `peakBytes`
 * counts from after the weights' load (`resetPeakMemory` then): the weights and what the stage's
 * program adds. A `total` row's counts from before `Anima.load`: the most the whole run held at once.
 * Every timing is the median of `--samples` (at least 5) after warm-up runs and the clock warm-up.
 *
 * `--json PATH` merges the rows into the file there as each stage ends (models/bench_rows.ts
 * `runStages`: rows of the same stage, size, format, blocks and batch are replaced, others kept; a
 * file of another adapter is refused before any stage runs). `--torch` reads the oracle pack's
 * `timing.py` output (`dit`, `adapter`, `vae`, `qwen3`, each `{fp32, fp32_tf32, bf16}`; e.g.
 * baselines/nvidia-h100-log/torch-timing.json) into the rows of the same stage: the 52-block batch-1
 * DiT and the VAE at 1024 x 1024, the adapter, and Qwen3 plus the adapter for `text-encoder`; without
 * it a replaced row keeps its torch figures. `--tokenizer DIR` reads `DIR/qwen3/` and
 * `DIR/t5/spiece.model` (the oracle pack's `tokenizers/`), else llm/fixtures' copies of the same
 * files. `--config tiny` is the oracle's tiny model (its Qwen3 and adapter too; the tokenizers' and
 * the pipeline's ids folded into their vocabularies), for a quick run on any adapter.
 *
 * @module
 */

import { acquireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { Program } from "../../harness/program.ts";
import { supportsTimestamps, timeEncoding, timeProgram as timeHarness, type Timing } from "../../harness/timing.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import type { ExpectedTensor } from "../../llm/weights/checkpoint.ts";
import {
  BENCH_PROMPT,
  benchHeader,
  type BenchRow,
  benchTokenizers,
  clockedStore,
  foldedTokenizer,
  listOption,
  readTorchLogs,
  runStages,
  stepClock,
  type TorchFigures,
  withPeak,
  writeProfile,
} from "../bench_rows.ts";
import { numberFlag, parseBytes, parseCliFlags } from "../cli.ts";
import { parseQwen3Config, type Qwen3Config } from "../qwen3/config.ts";
import { Qwen3Encoder } from "../qwen3/encoder.ts";
import type { Qwen3Format } from "../qwen3/linear.ts";
import { qwen3Tensors } from "../qwen3/weights.ts";
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
import { Anima, type AnimaTextEncoder, DEFAULT_MAX_RESIDENT_BYTES, QWEN_ENDOFTEXT } from "./pipeline.ts";
import { sequencePositions } from "./rope.ts";
import { onDemandTextEncoder, t5AdapterTokenizer } from "./text.ts";
import { timestepSinusoid } from "./timestep.ts";
import { AnimaVae } from "./vae.ts";
import { adapterLayout, ditLayout, vaeLayout } from "./weights.ts";

/** A model's sizes: the DiT (its block count set per run), the adapter, the VAE and Qwen3. */
export interface AnimaSizes {
  /** The DiT. */
  dit: DitConfig;
  /** The LLM adapter. */
  adapter: AdapterConfig;
  /** The VAE decoder. */
  vae: VaeConfig;
  /** The Qwen3 text encoder. */
  qwen3: Qwen3Config;
}

const vae = (dim: number): VaeConfig => ({
  dim,
  zDim: 16,
  dimMult: [1, 2, 4, 4],
  numResBlocks: 2,
  latentsMean: WAN_LATENTS_MEAN,
  latentsStd: WAN_LATENTS_STD,
});
const dit = (dim: number, heads: number, contextDim: number, adalnLoraDim: number, blocks: number): DitConfig => {
  const headDim = dim / heads, { dims, theta } = ditRopeSplit(headDim);
  return {
    blocks,
    dim,
    heads,
    headDim,
    contextDim,
    adalnLoraDim,
    mlpDim: 4 * dim,
    channels: 16,
    patch: 2,
    ropeDims: dims,
    ropeTheta: theta,
    contextRows: CONTEXT_ROWS,
  };
};

/** Anima's sizes (28 blocks; Anima-3.8B is the same with 52). */
export const REAL: AnimaSizes = {
  dit: dit(2048, 16, 1024, 256, 28),
  adapter: {
    layers: 6,
    sourceDim: 1024,
    targetDim: 1024,
    modelDim: 1024,
    heads: 16,
    headDim: 64,
    mlpDim: 4096,
    vocab: 32128,
    inProj: false,
  },
  vae: vae(96),
  qwen3: parseQwen3Config({
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
  }),
};

/** The oracle's tiny model (fixtures/index.json's configs). */
export const TINY: AnimaSizes = {
  dit: dit(48, 2, 32, 16, 2),
  adapter: {
    layers: 2,
    sourceDim: 40,
    targetDim: 32,
    modelDim: 32,
    heads: 2,
    headDim: 16,
    mlpDim: 128,
    vocab: 64,
    inProj: false,
  },
  vae: vae(4),
  qwen3: parseQwen3Config({
    hidden_size: 40,
    intermediate_size: 96,
    num_hidden_layers: 2,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    head_dim: 16,
    vocab_size: 128,
    rope_theta: 1e6,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: true,
  }),
};

const STAGES = ["text-encoder", "dit-step", "vae-decode", "total"] as const;

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

const prefixed = (prefix: string, layout: readonly ExpectedTensor[]) =>
  layout.map(({ name, shape }) => ({ name: prefix + name, shape }));

const round = (x: number) => Math.round(x * 1e3) / 1e3;
const stats = (t: Timing) => ({ ms: round(t.ms), msMin: round(t.msMin), msMax: round(t.msMax) });

/** A program's GPU time (harness/timing's timeProgram), its dispatch count and host encode time. */
async function timeProgram(gpu: ResidentDevice, program: Program, samples: number) {
  const timing = await timeHarness(gpu, program, { samples, warmup: 1 });
  const t0 = performance.now();
  for (let i = 0; i < 5; i++) program.encode(gpu.device.createCommandEncoder());
  const encodeUs = Math.round((performance.now() - t0) * 1000 / 5);
  return { timing, dispatches: program.steps.length, encodeUs };
}

/**
 * Torch's figures by stage from `timing.py`'s output (the Anima oracle's format).
 *
 * @param log the parsed JSON
 * @returns each row's torch figures, if the log has them
 */
export function torchFigures(
  log: Record<string, Record<string, { median_ms?: number; blocks?: number }>>,
): (row: BenchRow) => TorchFigures | undefined {
  const modes = { fp32: "torchFp32Ms", fp32_tf32: "torchTf32Ms", bf16: "torchBf16Ms" } as const;
  const of = (part: string): TorchFigures => {
    const out: TorchFigures = {};
    for (const [mode, field] of Object.entries(modes)) {
      const ms = log[part]?.[mode]?.median_ms;
      if (typeof ms === "number") out[field] = ms;
    }
    return out;
  };
  const sum = (a: TorchFigures, b: TorchFigures): TorchFigures =>
    Object.fromEntries(
      Object.entries(a).filter(([k]) => k in b).map(([k, v]) => [k, round(v + b[k as keyof TorchFigures]!)]),
    );
  const ditBlocks = log.dit?.info?.blocks ?? 52;
  const pick = (row: BenchRow): TorchFigures | undefined => {
    if (row.stage === "dit-step" && row.width === 1024 && row.blocks === ditBlocks && row.batch === 1) return of("dit");
    if (row.stage === "vae-decode" && row.width === 1024) return of("vae");
    if (row.stage === "adapter") return of("adapter");
    if (row.stage === "text-encoder") return sum(of("qwen3"), of("adapter"));
    return undefined;
  };
  return (row) => {
    const figures = pick(row);
    return figures && Object.keys(figures).length > 0 ? figures : undefined;
  };
}

/**
 * A text encoder that takes ids modulo `vocab`: the tiny model's stand-in for the real vocabulary (the
 * pipeline's own ids, the empty prompt's `<|endoftext|>`, folded too); the real model's is `text` itself.
 */
function foldedIds(text: AnimaTextEncoder, vocab: number): AnimaTextEncoder {
  if (vocab > QWEN_ENDOFTEXT) return text;
  return { ...text, encode: (ids) => text.encode(ids.map((id) => id % vocab)) };
}

/** What one run measures. */
interface Plan {
  gpu: ResidentDevice;
  sizes: AnimaSizes;
  blocks: number[];
  images: number[];
  formats: ("f32" | "q8")[];
  totalFormats: ("f32" | "q8")[];
  text: number;
  samples: number;
  /** `--profile DIR`: each DiT program's per-dispatch profile is written there. */
  profile?: string;
  steps: number;
  cfg: number;
  warmupSteps: number;
  budget: number;
  prompt: string;
  tokenizerDir?: string;
}

async function textEncoderRows(p: Plan, date: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const { qwen3, adapter: adapterConfig } = p.sizes;
  const adapter = await LlmAdapter.load(p.gpu, syntheticWeights(adapterLayout(adapterConfig)));
  try {
    for (const format of [...new Set(p.formats)] as Qwen3Format[]) {
      const encoder = await Qwen3Encoder.load(p.gpu, syntheticWeights(qwen3Tensors(qwen3)), qwen3, { format });
      try {
        const ids = Array.from({ length: p.text }, (_, i) => (i * 7919 + 13) % qwen3.vocabSize);
        const timing = { samples: p.samples, warmup: 2 };
        const { result, peakBytes } = await withPeak(p.gpu, async () => {
          const states = await encoder.encodeResident(ids), qwenProgram = await encoder.prepare(ids);
          const g = new Graph(p.gpu, "anima adapter bench");
          const inputs = {
            ids: p.gpu.upload(Int32Array.from(ids, (id) => id % adapterConfig.vocab)),
            targetPositions: p.gpu.upload(sequencePositions(p.text)),
            sourcePositions: p.gpu.upload(sequencePositions(p.text)),
          };
          try {
            adapter.build(g, { ...inputs, source: states });
            const adapterProgram = g.program();
            try {
              const both = await timeEncoding(p.gpu, "Qwen3 and the LLM adapter", (e) => {
                qwenProgram.encode(e);
                adapterProgram.encode(e);
              }, timing);
              const alone = rows.length === 0 ? await timeProgram(p.gpu, adapterProgram, p.samples) : undefined;
              return { both, alone, dispatches: qwenProgram.steps.length + adapterProgram.steps.length };
            } finally {
              adapterProgram.destroy();
            }
          } finally {
            g.destroy();
            for (const t of Object.values(inputs)) t.buffer.destroy();
          }
        });
        rows.push({
          stage: "text-encoder",
          width: null,
          height: null,
          format,
          ...stats(result.both),
          peakBytes,
          weightBytes: encoder.weightBytes + adapter.residentBytes,
          tokens: p.text,
          dispatches: result.dispatches,
          date,
        });
        if (result.alone) {
          rows.push({
            stage: "adapter",
            width: null,
            height: null,
            format: "f32",
            ...stats(result.alone.timing),
            peakBytes,
            weightBytes: adapter.residentBytes,
            tokens: p.text,
            dispatches: result.alone.dispatches,
            encodeUs: result.alone.encodeUs,
            date,
          });
        }
      } finally {
        encoder.destroy();
      }
    }
  } finally {
    adapter.destroy();
  }
  return rows;
}

async function ditRows(p: Plan, date: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const c = p.sizes.dit;
  for (const blocks of p.blocks) {
    const config = { ...c, blocks };
    for (const format of p.formats) {
      const t0 = performance.now();
      const dit = await AnimaDit.load(p.gpu, syntheticWeights(ditLayout(config)), { format });
      const loadSeconds = Math.round((performance.now() - t0) / 100) / 10;
      try {
        for (const size of p.images) {
          const latent = size / 8;
          for (const batch of [2, 1]) {
            const { result, peakBytes } = await withPeak(p.gpu, async () => {
              const g = new Graph(p.gpu, `anima DiT bench ${batch}`);
              const x = p.gpu.upload(new Float32Array(c.channels * latent * latent).fill(0.5));
              const sinusoid = p.gpu.upload(timestepSinusoid(0.7, c.dim));
              const context = p.gpu.upload(new Float32Array(batch * c.contextRows * c.contextDim).fill(0.01));
              const geometry = dit.geometry(latent, latent, batch);
              try {
                dit.build(g, { batch, height: latent, width: latent, latent: x, sinusoid, context }, geometry);
                const program = g.program();
                try {
                  const timed = await timeProgram(p.gpu, program, p.samples);
                  if (p.profile) {
                    const what = `dit-${blocks}-${size}-${format}-b${batch}`;
                    await writeProfile(p.gpu, what, [program], `${p.profile}/anima-${what}.json`);
                  }
                  return { ...timed, flops: program.cost.flops, scratch: g.scratchBytes };
                } finally {
                  program.destroy();
                }
              } finally {
                g.destroy();
                for (const t of [x, sinusoid, context, geometry.patchIndex, geometry.positions]) t.buffer.destroy();
              }
            });
            rows.push({
              stage: batch === 2 ? "dit-step-cfg" : "dit-step",
              width: size,
              height: size,
              format,
              blocks,
              batch,
              ...stats(result.timing),
              peakBytes,
              weightBytes: dit.residentBytes,
              dispatches: result.dispatches,
              tflops: Math.round(result.flops / result.timing.ms / 1e8) / 10,
              scratchBytes: result.scratch,
              encodeUs: result.encodeUs,
              loadSeconds,
              date,
            });
          }
        }
      } finally {
        dit.destroy();
      }
    }
  }
  return rows;
}

async function vaeRows(p: Plan, date: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const decoder = await AnimaVae.load(p.gpu, syntheticWeights(vaeLayout(p.sizes.vae)));
  try {
    for (const size of p.images) {
      const latent = size / 8;
      const { result, peakBytes } = await withPeak(p.gpu, async () => {
        const g = new Graph(p.gpu, "anima VAE bench");
        const z = p.gpu.upload(new Float32Array(16 * latent * latent).fill(0.2));
        try {
          decoder.build(g, z, latent, latent);
          const program = g.program();
          try {
            return { ...await timeProgram(p.gpu, program, p.samples), scratch: g.scratchBytes };
          } finally {
            program.destroy();
          }
        } finally {
          g.destroy();
          z.buffer.destroy();
        }
      });
      rows.push({
        stage: "vae-decode",
        width: size,
        height: size,
        format: "f32",
        ...stats(result.timing),
        peakBytes,
        weightBytes: decoder.residentBytes,
        dispatches: result.dispatches,
        scratchBytes: result.scratch,
        encodeUs: result.encodeUs,
        date,
      });
    }
  } finally {
    decoder.destroy();
  }
  return rows;
}

async function totalRows(p: Plan, date: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const { qwen, t5 } = await benchTokenizers(p.tokenizerDir);
  const { qwen3, adapter } = p.sizes;
  for (const blocks of p.blocks) {
    const config = { ...p.sizes.dit, blocks };
    for (const format of p.totalFormats) {
      for (const size of p.images) {
        const clock = { ms: 0 };
        const qwenStore = clockedStore(syntheticWeights(qwen3Tensors(qwen3)), clock);
        const source = {
          dit: clockedStore(
            syntheticWeights([
              ...prefixed("net.", ditLayout(config)),
              ...prefixed("net.llm_adapter.", adapterLayout(adapter)),
            ]),
            clock,
          ),
          vae: clockedStore(syntheticWeights(vaeLayout(p.sizes.vae)), clock),
          textEncoder: foldedIds(
            onDemandTextEncoder(qwen, async () => ({
              encoder: await Qwen3Encoder.load(p.gpu, qwenStore, qwen3, { format: "f32" }),
            })),
            qwen3.vocabSize,
          ),
          t5Tokenizer: t5AdapterTokenizer(foldedTokenizer(t5, adapter.vocab)),
        };
        p.gpu.resetPeakMemory();
        const t0 = performance.now();
        const model = await Anima.load(source, { device: p.gpu, format, maxResidentBytes: p.budget });
        try {
          const loadSeconds = Math.round((performance.now() - t0) / 100) / 10;
          const image = { prompt: p.prompt, negativePrompt: "", width: size, height: size, cfg: p.cfg, seed: 7 };
          await model.generate({ ...image, steps: p.warmupSteps });
          const stepsAt: number[] = [];
          clock.ms = 0;
          const start = performance.now();
          await model.generate({ ...image, steps: p.steps, onStep: () => stepsAt.push(performance.now()) });
          const end = performance.now();
          rows.push({
            stage: "total",
            width: size,
            height: size,
            format,
            blocks,
            ms: round(end - start),
            peakBytes: p.gpu.memory.peakBytes,
            textEncoderFormat: "f32",
            maxResidentBytes: p.budget,
            residency: model.residency,
            hostBytes: model.hostBytes,
            steps: p.steps,
            cfg: p.cfg,
            qwenTokens: qwen.encode(p.prompt).length,
            ...stepClock(start, stepsAt, end),
            weightReadMs: round(clock.ms),
            loadSeconds,
            warmupSteps: p.warmupSteps,
            date,
          });
        } finally {
          model.destroy();
        }
      }
    }
  }
  return rows;
}

const METHOD =
  "models/anima/bench.ts, seeded weights at Anima's shapes. Stage rows: the stage resident, GPU timestamps " +
  "(harness/timing.ts timeProgram of the DiT, adapter and VAE programs; timeEncoding of Qwen3 and the adapter), " +
  "median of the samples after warm-up runs and a clock warm-up; peakBytes from after the weights' load. total: " +
  "Anima.load at maxResidentBytes, the wall clock of generate() of the second image (after an untimed one), loads " +
  "included; peakBytes from before the load. peakBytes: ResidentDevice.memory (bytes in live buffers). torch: the " +
  "oracle pack's timing.py (random weights, CUDA events, median of 5 after 2 warm-ups).";

const USAGE = `usage: deno run -A models/anima/bench.ts [options]     (the module doc says what each row measures)
  --config real|tiny       Anima's sizes (default), or the oracle's tiny model for a quick run on any adapter
  --stages LIST            of text-encoder,dit-step,vae-decode,total (default all)
  --blocks LIST            DiT blocks: 28 (Anima), 52 (Anima-3.8B) (default 28; tiny 2)
  --sizes LIST             image sizes in pixels, multiples of 16 (default 1024; tiny 32)
  --formats LIST           f32,q8: the DiT's and Qwen3's products (default f32)
  --total-formats LIST     the formats of the total rows (default --formats)
  --text N                 text-encoder tokens (default 512; tiny 16)
  --samples N              timings per figure, at least 5 (default 5)
  --steps N, --cfg S       the total rows' sampling steps and guidance (default 50, 3.5)
  --warmup-steps N         steps of the untimed first image of a total row (default 1)
  --max-resident BYTES     the total rows' GPU budget, e.g. 6GiB (default 4 GiB)
  --tokenizer DIR          DIR/qwen3/ and DIR/t5/spiece.model (default: llm/fixtures' copies)
  --prompt TEXT            the total rows' prompt (default about 540 Qwen3 tokens)
  --torch LOG,...          the oracle's timing.py output, merged into the rows of the same stage
  --json PATH              merge the rows into this file as each stage ends
  --profile DIR            also time each DiT dispatch alone: sums by kernel to stderr, every dispatch
                           to DIR/anima-dit-<blocks>-<size>-<format>-b<batch>.json
  --help                   this text
The rows are printed as JSON at the end; progress goes to stderr. Needs timestamp queries.`;

async function main(args: readonly string[]): Promise<void> {
  const flags = parseCliFlags(args, {
    valued: [
      "stages",
      "blocks",
      "sizes",
      "formats",
      "total-formats",
      "text",
      "samples",
      "steps",
      "cfg",
      "warmup-steps",
      "max-resident",
      "tokenizer",
      "prompt",
      "torch",
      "json",
      "profile",
      "config",
    ],
    required: [],
    usage: USAGE,
  });
  if (flags === "help") return console.log(USAGE);
  const name = flags.get("config") ?? "real";
  if (name !== "real" && name !== "tiny") throw new Error(`--config must be real or tiny, got ${name}`);
  const sizes = name === "tiny" ? TINY : REAL;
  const stages = listOption(flags.get("stages") ?? STAGES.join(","), "stages", STAGES);
  const formats = listOption(flags.get("formats") ?? "f32", "formats", ["f32", "q8"]) as ("f32" | "q8")[];
  const positive = (option: string, fallback: number) => numberFlag(flags, option, true, { min: 1 }) ?? fallback;
  const cfg = numberFlag(flags, "cfg", false) ?? 3.5;
  const plan: Plan = {
    gpu: undefined as unknown as ResidentDevice,
    sizes,
    blocks: listOption(flags.get("blocks") ?? String(sizes.dit.blocks), "blocks", (v) => /^[1-9]\d*$/.test(v))
      .map(Number),
    images: listOption(
      flags.get("sizes") ?? (name === "tiny" ? "32" : "1024"),
      "sizes",
      (v) => /^\d+$/.test(v) && Number(v) > 0 && Number(v) % 16 === 0,
    ).map(Number),
    formats,
    totalFormats: listOption(flags.get("total-formats") ?? formats.join(","), "total-formats", ["f32", "q8"]) as (
      | "f32"
      | "q8"
    )[],
    text: positive("text", name === "tiny" ? 16 : 512),
    samples: Math.max(5, positive("samples", 5)),
    steps: positive("steps", 50),
    cfg,
    warmupSteps: positive("warmup-steps", 1),
    budget: flags.has("max-resident") ? parseBytes(flags.get("max-resident")!) : DEFAULT_MAX_RESIDENT_BYTES,
    prompt: flags.get("prompt") ?? BENCH_PROMPT,
    tokenizerDir: flags.get("tokenizer"),
    profile: flags.get("profile"),
  };
  const torch = await readTorchLogs(flags.get("torch"));
  plan.gpu = await acquireDevice();
  if (!supportsTimestamps(plan.gpu)) throw new Error("the device has no timestamp-query");
  const date = new Date().toISOString();
  const make = {
    "text-encoder": () => textEncoderRows(plan, date),
    "dit-step": () => ditRows(plan, date),
    "vae-decode": () => vaeRows(plan, date),
    total: () => totalRows(plan, date),
  };
  const written = await runStages({
    stages: STAGES.filter((stage) => stages.includes(stage)),
    make,
    header: benchHeader(plan.gpu, { date, method: METHOD, config: name }, torch),
    torch: torch.map(({ log }) => torchFigures(log)),
    json: flags.get("json"),
  });
  console.log(JSON.stringify(written, null, 1));
  plan.gpu.destroy();
}

if (import.meta.main) {
  try {
    await main(Deno.args);
  } catch (e) {
    console.error(`anima bench: ${(e as Error).message}`);
    Deno.exit(2);
  }
}
