/**
 * Deno only (a benchmark): Z-Image Turbo's stages and whole images at real sizes on the adapter present,
 * on synthetic weights of Turbo's shapes (values do not change the work), written as the rows of
 * `baselines/<card>.json` (models/bench_rows.ts):
 *
 *     deno run -A models/zimage/bench.ts [--stages text-encoder,dit-step,vae-decode,total] [--sizes 512,1024]
 *         [--formats f32,q8,q4g128] [--total-formats q4g128] [--caption 512] [--samples 5]
 *         [--steps 8] [--warmup-steps 1] [--max-resident 4GiB] [--tokenizer DIR] [--prompt TEXT]
 *         [--torch LOG,...] [--json PATH] [--config turbo|tiny] [--layers N] [--profile DIR]
 *         [--activations f32,int8]
 *
 * Rows (each with `peakBytes`, the most bytes live in buffers on the device, `ResidentDevice.memory`):
 * - `text-encoder`: Qwen3-4B's `hidden_states[-2]` of `--caption` ids (the pipeline's encoder: 35 layers,
 *   the embedding rows read on the host), one row per text encoder format the `--formats` ask for (f32
 *   for f32, q8 otherwise, as `ZImage.load` picks); width and height null. GPU time of its program
 *   (harness/timing.ts `timeProgram`).
 * - `dit-step` per format and size: the recording `DitRun.step` submits (timestep path, modulation,
 *   both streams, the main layers, the final layer, unpatchify; no Euler update) with a `--caption`
 *   token caption; `caption-refiner` beside it (the context refiner, once per caption; the same run, so
 *   the same `peakBytes`). GPU time of `timeEncoding` (between empty timestamped passes, after warm-up
 *   and the clock warm-up).
 * - `vae-decode` per size (format f32): the decoder of the same latent, timed the same way.
 * - `total` per `--total-formats` format and size: an image as a user makes it: `ZImage.load` of the
 *   synthetic checkpoint at the default budget (`--max-resident`, 4 GiB: stages that do not fit together
 *   load in turn and are released, a DiT over it streams its blocks), the text encoder q8 (its f32 form
 *   is over the default budget), `generate` of `--prompt` at `--steps` steps: `ms` is the wall clock of
 *   the second image, after an untimed one of `--warmup-steps` steps (the same stages, so every kernel is
 *   compiled). Each stage's load is in it, as it is in a user's second image: staged, the stages come
 *   back from the host copies the first image left (`hostBytes`), by uploads alone; `weightReadMs` is the
 *   time spent making synthetic weights on the host during the timed image (a file's reads would take
 *   its place: none once the copies exist), and `firstStepMs` (prompt, loads, caption, one step),
 *   `stepMs` (the median later step, each step timed to its completion on the GPU) and `afterStepsMs`
 *   (the VAE's load and decode) say where the rest went. The default prompt fills the 512 caption tokens
 *   the stage rows time.
 *
 * `--activations` lists the DiT's activations the `dit-step` (and `caption-refiner`) and `total` rows are
 * taken with (default f32): int8 (`ZImageDit.load`'s `activations`) for q8 and q4g128 only, its rows
 * marked `activations: "int8"` (an f32 format has no int8 rows; a run left with none is refused).
 *
 * Stage rows are taken with the stage resident (loaded whole, outside any budget); their `peakBytes`
 * counts from after the weights' load (`resetPeakMemory` then), so it is the weights and whatever the
 * stage's program adds; `weightBytes` is the stage's weights. A `total` row's peak counts from before
 * `ZImage.load`: the most the whole run held at once.
 *
 * `--json PATH` merges the rows into the file there as each stage ends (models/bench_rows.ts
 * `runStages`: rows of the same stage, size and format are replaced, others kept; a file of another
 * adapter is refused before any stage runs), so rows of several runs combine. `--torch`
 * reads torch's figures from the oracle pack's `timing.py` output (`{rows: [{component, size, mode,
 * median_ms}]}`, e.g. baselines/nvidia-h100-log/torch-timing.json) into the rows of the same stage and
 * size; without it a replaced row keeps the torch figures it had. `--tokenizer DIR` reads Qwen3's
 * tokenizer from `DIR/qwen3/` (the oracle pack's `tokenizers/`), else llm/fixtures' copy of the same
 * files. `--config tiny` is the oracle's tiny model (its Qwen3 too; the tokenizer's ids folded into its
 * vocabulary); `--layers N` keeps Turbo's widths with N main layers and one per refiner (the figures
 * then cover those layers only).
 *
 * @module
 */

import { acquireDevice, type ResidentDevice } from "../../harness/device.ts";
import { supportsTimestamps, timeEncoding, timeProgram, type Timing } from "../../harness/timing.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import type { ExpectedTensor } from "../../llm/weights/checkpoint.ts";
import { scopedStore } from "../../llm/weights/checkpoint.ts";
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
import {
  CAPTION_HIDDEN_STATE,
  parseDitConfig,
  parseVaeConfig,
  QWEN3_4B,
  vaeScaleFactor,
  Z_IMAGE_TURBO,
  type ZImageConfig,
} from "./config.ts";
import { ACTIVATIONS, type Activations, LINEAR_FORMATS, type LinearFormat } from "../linear.ts";
import { DEFAULT_MAX_RESIDENT_BYTES, textEncoderWeightBytes, ZImage } from "./pipeline.ts";
import type { ZImageCheckpoint } from "./source.ts";
import { ditWeightBytes, ZImageDit } from "./transformer/dit.ts";
import { decoderTensors, VaeDecoder } from "./vae/decoder.ts";
import { ditTensors, openDit, openVaeDecoder } from "./weights.ts";

/** The tiny config of the oracle's goldens (for a quick run on any adapter), its Qwen3 included. */
export const TINY: ZImageConfig & { textEncoder: Qwen3Config } = {
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
  textEncoder: parseQwen3Config({
    vocab_size: 256,
    hidden_size: 32,
    intermediate_size: 64,
    num_hidden_layers: 3,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 16,
    rope_theta: 1e6,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: true,
  }),
};

const STAGES = ["text-encoder", "dit-step", "vae-decode", "total"] as const;

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

/**
 * The whole checkpoint, synthetic: the DiT, the VAE decoder and the text encoder under the port's
 * names, every read's wall time added to `clock.ms`.
 */
function syntheticCheckpoint(config: ZImageConfig, textEncoder: Qwen3Config, clock: { ms: number }): ZImageCheckpoint {
  return {
    config,
    dit: openDit(clockedStore(syntheticWeights(ditTensors(config.dit)), clock), config.dit),
    vae: openVaeDecoder(clockedStore(syntheticVae(config), clock), config.vae),
    textEncoder: { store: clockedStore(syntheticWeights(qwen3Tensors(textEncoder)), clock), config: textEncoder },
    layout: "diffusers",
  };
}

function syntheticVae(config: ZImageConfig): TensorStore {
  return syntheticWeights(decoderTensors(config.vae).map((t) => ({ name: `decoder.${t.name}`, shape: t.shape })));
}

const round = (x: number) => Math.round(x * 1e3) / 1e3;
const stats = (t: Timing) => ({ ms: round(t.ms), msMin: round(t.msMin), msMax: round(t.msMax) });
const fill = (n: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37)) as Float32Array<ArrayBuffer>;

/**
 * Torch's figures by stage and size from `timing.py`'s output (the Z-Image oracle's format).
 *
 * @param log the parsed JSON
 * @returns each row's torch figures, if the log has them
 */
export function torchFigures(
  log: { rows?: { component: string; size?: number; mode: string; median_ms: number }[] },
): (row: BenchRow) => TorchFigures | undefined {
  const stage = { dit: "dit-step", vae_decode: "vae-decode", text_encoder: "text-encoder" } as Record<string, string>;
  const field = { fp32: "torchFp32Ms", tf32: "torchTf32Ms", bf16: "torchBf16Ms" } as const;
  const figures = new Map<string, TorchFigures>();
  for (const r of log.rows ?? []) {
    const f = field[r.mode as keyof typeof field];
    if (!stage[r.component] || !f) continue;
    const key = `${stage[r.component]}:${r.size ?? ""}`;
    figures.set(key, { ...figures.get(key), [f]: r.median_ms });
  }
  return (row: BenchRow) => figures.get(`${row.stage}:${row.width ?? ""}`);
}

/** What one run measures. */
interface Plan {
  gpu: ResidentDevice;
  config: ZImageConfig;
  textEncoder: Qwen3Config;
  sizes: number[];
  formats: LinearFormat[];
  totalFormats: LinearFormat[];
  /** The DiT's activations of the dit-step and total rows (int8 for the quantized formats only). */
  activations: Activations[];
  capLen: number;
  samples: number;
  /** `--profile DIR`: the DiT step's per-dispatch profile is written there. */
  profile?: string;
  steps: number;
  warmupSteps: number;
  budget: number;
  prompt: string;
  tokenizerDir?: string;
}

const teFormatOf = (format: LinearFormat): Qwen3Format => format === "f32" ? "f32" : "q8";

/** The formats crossed with the activations each takes (int8 needs quantized weights). */
function formatRuns(formats: LinearFormat[], activations: Activations[]) {
  return formats.flatMap((format) =>
    activations.filter((a) => a === "f32" || format !== "f32").map((a) => ({
      format,
      activations: a,
      // The row's mark: only int8 rows carry one (rows without it are f32's, as before the option).
      mark: a === "int8" ? { activations: a } : {},
    }))
  );
}

async function textEncoderRows(p: Plan, date: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const store = syntheticWeights(qwen3Tensors(p.textEncoder));
  for (const format of [...new Set(p.formats.map(teFormatOf))]) {
    const encoder = await Qwen3Encoder.load(p.gpu, store, p.textEncoder, {
      format,
      hiddenState: CAPTION_HIDDEN_STATE,
      embedding: "host",
    });
    try {
      const ids = Array.from({ length: p.capLen }, (_, i) => (i * 7919 + 13) % p.textEncoder.vocabSize);
      const { result: [timing, dispatches], peakBytes } = await withPeak(p.gpu, async () => {
        const program = await encoder.prepare(ids);
        return [await timeProgram(p.gpu, program, { samples: p.samples, warmup: 2 }), program.steps.length] as const;
      });
      rows.push({
        stage: "text-encoder",
        width: null,
        height: null,
        format,
        ...stats(timing),
        peakBytes,
        weightBytes: encoder.weightBytes,
        tokens: p.capLen,
        dispatches,
        date,
      });
    } finally {
      encoder.destroy();
    }
  }
  return rows;
}

async function ditRows(p: Plan, date: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const scale = vaeScaleFactor(p.config.vae);
  for (const { format, activations, mark } of formatRuns(p.formats, p.activations)) {
    const started = performance.now();
    const dit = await ZImageDit.load(p.gpu, syntheticWeights(ditTensors(p.config.dit)), p.config.dit, {
      format,
      activations,
    });
    const loadSeconds = Math.round((performance.now() - started) / 100) / 10;
    try {
      for (const size of p.sizes) {
        const h = size / scale, timing = { samples: p.samples, warmup: 2 };
        const { result, peakBytes } = await withPeak(p.gpu, async () => {
          const run = dit.prepare({ latentH: h, latentW: h, capLen: p.capLen });
          try {
            p.gpu.device.queue.writeBuffer(run.capFeats.buffer, 0, fill(run.capFeats.length));
            p.gpu.device.queue.writeBuffer(run.latent.buffer, 0, fill(run.latent.length));
            const caption = await timeEncoding(p.gpu, "the caption refiner", (e) => run.encodeCaptionInto(e), timing);
            const step = await timeEncoding(p.gpu, "a DiT step", (e) => run.encodeStep(e, 0.5), timing);
            if (p.profile) {
              const what = `dit-step-${size}-${format}${activations === "int8" ? "-int8" : ""}`;
              await writeProfile(p.gpu, what, run.stepPrograms, `${p.profile}/zimage-${what}.json`);
            }
            return { caption, step, dispatches: run.dispatchesPerStep };
          } finally {
            run.destroy();
          }
        });
        const common = { width: size, height: size, format, ...mark, peakBytes };
        rows.push({
          stage: "dit-step",
          ...common,
          ...stats(result.step),
          weightBytes: ditWeightBytes(p.config.dit, format),
          dispatches: result.dispatches,
          tokens: { image: (h / 2) ** 2, caption: p.capLen },
          layers: p.config.dit.nLayers,
          loadSeconds,
          date,
        });
        rows.push({ stage: "caption-refiner", ...common, ...stats(result.caption), date });
      }
    } finally {
      dit.destroy();
    }
  }
  return rows;
}

async function vaeRows(p: Plan, date: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const scale = vaeScaleFactor(p.config.vae);
  const before = p.gpu.memory.bytes;
  const vae = await VaeDecoder.load(p.gpu, scopedStore(syntheticVae(p.config), "decoder."), p.config.vae);
  const weightBytes = p.gpu.memory.bytes - before;
  try {
    for (const size of p.sizes) {
      const h = size / scale;
      const { result, peakBytes } = await withPeak(p.gpu, async () => {
        const decode = vae.prepare(h, h);
        try {
          p.gpu.device.queue.writeBuffer(decode.latent.buffer, 0, fill(decode.latent.length));
          const timing = { samples: p.samples, warmup: 2 };
          return await timeEncoding(p.gpu, "the VAE decode", (e) => decode.encode(e), timing);
        } finally {
          decode.destroy();
        }
      });
      rows.push({
        stage: "vae-decode",
        width: size,
        height: size,
        format: "f32",
        ...stats(result),
        peakBytes,
        weightBytes,
        date,
      });
    }
  } finally {
    vae.destroy();
  }
  return rows;
}

async function totalRows(p: Plan, date: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const { qwen } = await benchTokenizers(p.tokenizerDir);
  const tokenizer = foldedTokenizer(qwen, p.textEncoder.vocabSize);
  for (const { format, activations, mark } of formatRuns(p.totalFormats, p.activations)) {
    for (const size of p.sizes) {
      p.gpu.resetPeakMemory();
      const started = performance.now(), clock = { ms: 0 };
      const model = await ZImage.load(syntheticCheckpoint(p.config, p.textEncoder, clock), {
        device: p.gpu,
        format,
        activations,
        textEncoderFormat: "q8",
        tokenizer,
        maxResidentBytes: p.budget,
      });
      try {
        const loadSeconds = (performance.now() - started) / 1000;
        const image = { prompt: p.prompt, width: size, height: size, seed: 7 };
        await model.generate({ ...image, steps: p.warmupSteps });
        const stepsAt: number[] = [];
        clock.ms = 0;
        const t0 = performance.now();
        const out = await model.generate({ ...image, steps: p.steps, onStep: () => stepsAt.push(performance.now()) });
        const ms = performance.now() - t0;
        rows.push({
          stage: "total",
          width: size,
          height: size,
          format,
          ...mark,
          ms: round(ms),
          peakBytes: p.gpu.memory.peakBytes,
          textEncoderFormat: "q8",
          maxResidentBytes: p.budget,
          resident: model.resident,
          hostBytes: model.hostBytes,
          stageWeightBytes: {
            textEncoder: textEncoderWeightBytes(p.textEncoder, "q8"),
            dit: ditWeightBytes(p.config.dit, format, model.resident.ditStreamed),
          },
          steps: p.steps,
          captionTokens: out.captionTokens,
          ...stepClock(t0, stepsAt, t0 + ms),
          weightReadMs: round(clock.ms),
          loadSeconds: Math.round(loadSeconds * 10) / 10,
          warmupSteps: p.warmupSteps,
          date,
        });
      } finally {
        model.destroy();
      }
    }
  }
  return rows;
}

const METHOD =
  "models/zimage/bench.ts, synthetic weights at Turbo's shapes. Stage rows: the stage resident, GPU timestamps " +
  "(harness/timing.ts timeProgram for the text encoder, timeEncoding between empty timestamped passes for the DiT " +
  "step and the VAE), median of the samples after 2 untimed and a clock warm-up; peakBytes from after the weights' " +
  "load. total: ZImage.load at maxResidentBytes, the wall clock of generate() of the second image (after an untimed " +
  "one), loads included; peakBytes from before the load. peakBytes: ResidentDevice.memory (bytes in live buffers). " +
  "torch: the oracle pack's timing.py (random weights, synchronize around each call, median of 5 after 2 warm-ups).";

const USAGE = `usage: deno run -A models/zimage/bench.ts [options]     (the module doc says what each row measures)
  --config turbo|tiny      Turbo's sizes (default), or the oracle's tiny model for a quick run on any adapter
  --layers N               Turbo's widths with N main layers and one per refiner (default Turbo's 30)
  --stages LIST            of text-encoder,dit-step,vae-decode,total (default all)
  --sizes LIST             image sizes in pixels, multiples of 16; tiny 4 (default 1024; tiny 32)
  --formats LIST           f32,q8,q4g128: the DiT's products (default q4g128)
  --total-formats LIST     the formats of the total rows (default --formats)
  --activations LIST       f32,int8: the DiT's activations in the dit-step and total rows; int8 rows
                           (quantized formats only) are marked "activations" (default f32)
  --caption N              caption tokens of the stage rows (default 512; tiny 32)
  --samples N              timings per figure (default 5)
  --steps N                the total rows' sampling steps (default 8)
  --warmup-steps N         steps of the untimed first image of a total row (default 1)
  --max-resident BYTES     the total rows' GPU budget, e.g. 6GiB (default 4 GiB)
  --tokenizer DIR          DIR/qwen3/ (default: llm/fixtures' copy)
  --prompt TEXT            the total rows' prompt (default about 540 Qwen3 tokens)
  --torch LOG,...          the oracle's timing.py output, merged into the rows of the same stage and size
  --json PATH              merge the rows into this file as each stage ends
  --profile DIR            also time each DiT step dispatch alone: sums by kernel to stderr, every
                           dispatch to DIR/zimage-dit-step-<size>-<format>.json
  --help                   this text
The rows are printed as JSON at the end; progress goes to stderr. Needs timestamp queries.`;

async function main(args: readonly string[]): Promise<void> {
  const flags = parseCliFlags(args, {
    valued: [
      "stages",
      "sizes",
      "formats",
      "total-formats",
      "activations",
      "caption",
      "samples",
      "steps",
      "warmup-steps",
      "max-resident",
      "tokenizer",
      "prompt",
      "torch",
      "json",
      "profile",
      "config",
      "layers",
    ],
    required: [],
    usage: USAGE,
  });
  if (flags === "help") return console.log(USAGE);
  const name = flags.get("config") ?? "turbo";
  if (name !== "turbo" && name !== "tiny") throw new Error(`--config must be turbo or tiny, got ${name}`);
  const tiny = name === "tiny";
  const base = tiny ? TINY : Z_IMAGE_TURBO;
  const layers = numberFlag(flags, "layers", true, { min: 1 });
  const config: ZImageConfig = layers === undefined
    ? { dit: base.dit, vae: base.vae }
    : { dit: { ...base.dit, nLayers: layers, nRefinerLayers: 1 }, vae: base.vae };
  const scale = vaeScaleFactor(config.vae);
  const stages = listOption(flags.get("stages") ?? STAGES.join(","), "stages", STAGES);
  const formats = listOption(flags.get("formats") ?? "q4g128", "formats", LINEAR_FORMATS) as LinearFormat[];
  const positive = (name: string, fallback: number) => numberFlag(flags, name, true, { min: 1 }) ?? fallback;
  const plan: Plan = {
    gpu: undefined as unknown as ResidentDevice,
    config,
    textEncoder: tiny ? TINY.textEncoder : QWEN3_4B,
    sizes: listOption(
      flags.get("sizes") ?? (tiny ? "32" : "1024"),
      "sizes",
      (v) => /^\d+$/.test(v) && Number(v) > 0 && Number(v) % (2 * scale) === 0,
    ).map(Number),
    formats,
    totalFormats: listOption(
      flags.get("total-formats") ?? formats.join(","),
      "total-formats",
      LINEAR_FORMATS,
    ) as LinearFormat[],
    activations: listOption(flags.get("activations") ?? "f32", "activations", ACTIVATIONS) as Activations[],
    capLen: positive("caption", tiny ? 32 : 512),
    samples: positive("samples", 5),
    steps: positive("steps", 8),
    warmupSteps: positive("warmup-steps", 1),
    budget: flags.has("max-resident") ? parseBytes(flags.get("max-resident")!) : DEFAULT_MAX_RESIDENT_BYTES,
    prompt: flags.get("prompt") ?? BENCH_PROMPT,
    tokenizerDir: flags.get("tokenizer"),
    profile: flags.get("profile"),
  };
  for (const [name, list] of [["formats", plan.formats], ["total-formats", plan.totalFormats]] as const) {
    if (formatRuns(list, plan.activations).length === 0) {
      throw new Error(`--activations int8 needs a q8 or q4g128 format, but --${name} is ${list.join(",")}`);
    }
  }
  const torch = await readTorchLogs(flags.get("torch"));
  plan.gpu = await acquireDevice();
  if (!supportsTimestamps(plan.gpu)) throw new Error("the device has no timestamp-query: no GPU figure");
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
    header: benchHeader(plan.gpu, {
      date,
      method: METHOD,
      config: tiny ? "tiny" : layers === undefined ? "turbo" : `turbo, ${layers} main layers`,
    }, torch),
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
    console.error(`zimage bench: ${(e as Error).message}`);
    Deno.exit(2);
  }
}
