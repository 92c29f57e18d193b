/**
 * Deno only (for the models' benchmarks, models/<name>/bench.ts; not published): the rows of an image model's
 * `baselines/<card>.json`, and what the benches share to write them.
 *
 * A baseline is `{ adapter, runtime, date, method?, rows }`, one row per figure:
 * `{ stage, width, height, format, ms, peakBytes, weightBytes?, date, torchFp32Ms?, torchTf32Ms?,
 * torchBf16Ms?, ... }` (`width` and `height` are null for a stage that does not depend on the image
 * size, the text encoder). A row is known by its key: stage, width, height, format and, where the row
 * has them, `blocks` and `batch`. {@link writeBaseline} merges a run's rows into the file already
 * there: a row of the same key is replaced, other rows are kept, so the rows of several runs (one per
 * stage, size or model) combine without hand edits. Torch's figures for the same stage at the same size
 * (whatever our format) are taken from the torch timing logs the caller reads, or else carried over
 * from the row being replaced.
 *
 * Tokenizers ({@link benchTokenizers}): Qwen3's and T5's, from a directory laid out as the oracle
 * pack's `tokenizers/` (`qwen3/vocab.json`, `qwen3/merges.txt`, `qwen3/tokenizer_config.json`,
 * `t5/spiece.model`) or, without one, the same files kept in `llm/fixtures/`; a tiny model's vocabulary
 * takes the real tokenizer's ids folded into it ({@link foldedTokenizer}).
 *
 * @module
 */

import type { ResidentDevice } from "../harness/device.ts";
import type { Program } from "../harness/program.ts";
import { type DispatchTime, type KernelTime, profileByKernel, profileProgram } from "../harness/timing.ts";
import type { TensorStore } from "../llm/safetensors.ts";
import { qwenFiles, t5Model } from "../llm/fixtures/tokenizer_files.ts";
import { loadQwenTokenizer } from "../llm/tokenizer/qwen.ts";
import { SentencePieceTokenizer } from "../llm/tokenizer/sentencepiece.ts";
import type { Tokenizer } from "../llm/tokenizer/tokenizer.ts";

/**
 * The whole-image rows' default prompt: about 540 Qwen3 tokens, so Z-Image's caption fills its 512
 * tokens (the template's tail truncated, as upstream's) and Anima's T5 ids fill its 512 context rows,
 * the lengths the text-encoder and DiT rows time.
 */
export const BENCH_PROMPT: string = Array(12).fill(
  "A lighthouse on a basalt cliff at dusk, waves breaking on the rocks below, gulls over the water, " +
    "warm light in the lantern room, a winding path with a wooden fence, oil painting, rich texture.",
).join(" ");

/** Torch's figures of a row: the oracle's `timing.py` on the same card, per mode. */
export interface TorchFigures {
  /** IEEE fp32 (TF32 off). */
  torchFp32Ms?: number;
  /** fp32 tensors on TF32 tensor cores. */
  torchTf32Ms?: number;
  /** bf16 weights and activations. */
  torchBf16Ms?: number;
}

/** The torch fields a row may carry. */
export const TORCH_FIELDS = ["torchFp32Ms", "torchTf32Ms", "torchBf16Ms"] as const;

/** One figure of a baseline. */
export interface BenchRow extends TorchFigures {
  /** What was timed: `text-encoder`, `dit-step`, `vae-decode`, `total`, ... */
  stage: string;
  /** Image width in pixels; null where the stage does not depend on it. */
  width: number | null;
  /** Image height in pixels; null where the stage does not depend on it. */
  height: number | null;
  /** The weights' format (the DiT's, the text encoder's, f32 for the VAE). */
  format: string;
  /** Milliseconds: GPU time of the stage, or the wall clock of a whole image (`total`). */
  ms: number;
  /** The most bytes live in buffers on the device during the stage (`ResidentDevice.memory`). */
  peakBytes: number | null;
  /** When the row was taken (ISO 8601). */
  date?: string;
  /** Anything else the stage reports (weight bytes, dispatches, blocks, batch, spread). */
  [field: string]: unknown;
}

/** A baseline file. */
export interface Baseline {
  /** The adapter the rows were taken on. */
  adapter: string;
  /** The runtimes (Deno, and torch where its figures are merged). */
  runtime: string;
  /** When the file was last written. */
  date: string;
  /** The rows. */
  rows: BenchRow[];
  /** How the figures were taken, and anything else the file says. */
  [field: string]: unknown;
}

/**
 * A row's key: stage, size, format and, where present, blocks, batch and activations.
 *
 * @param row the row
 * @returns a string equal for rows of the same figure
 */
export function rowKey(row: BenchRow): string {
  return JSON.stringify([
    row.stage,
    row.width,
    row.height,
    row.format,
    row.blocks ?? null,
    row.batch ?? null,
    row.activations ?? null,
  ]);
}

/** The key of torch's figure for a row: its key without the format (torch runs its own modes). */
function torchKey(row: BenchRow): string {
  return JSON.stringify([row.stage, row.width, row.height, row.blocks ?? null, row.batch ?? null]);
}

function torchOf(row: BenchRow): TorchFigures | undefined {
  const figures: TorchFigures = {};
  for (const f of TORCH_FIELDS) if (typeof row[f] === "number") figures[f] = row[f];
  return Object.keys(figures).length > 0 ? figures : undefined;
}

/**
 * Merges a run's baseline into the one already written: rows of the same key are replaced (keeping the
 * old row's torch figures when the new one has none), others kept in place, new ones appended; the
 * header takes the run's fields.
 *
 * @param old the file's baseline, or null when there is none
 * @param fresh the run's
 * @returns the merged baseline
 * @throws Error when the two were taken on different adapters
 *
 * @example
 * ```ts
 * import { mergeBaseline } from "./bench_rows.ts";
 * const row = { stage: "vae-decode", width: 1024, height: 1024, format: "f32", peakBytes: 1 };
 * const old = { adapter: "GPU", runtime: "r", date: "d0", rows: [{ ...row, ms: 5, torchFp32Ms: 4 }] };
 * const merged = mergeBaseline(old, { adapter: "GPU", runtime: "r", date: "d1", rows: [{ ...row, ms: 3 }] });
 * merged.rows; // [{ ...row, ms: 3, torchFp32Ms: 4 }]
 * ```
 */
export function mergeBaseline(old: Baseline | null, fresh: Baseline): Baseline {
  if (!old) return fresh;
  if (!old.adapter.startsWith(fresh.adapter) && !fresh.adapter.startsWith(old.adapter)) {
    throw new Error(`baseline: its rows were taken on "${old.adapter}", this run's on "${fresh.adapter}"`);
  }
  const oldTorch = new Map<string, TorchFigures>();
  for (const row of old.rows) {
    const figures = torchOf(row);
    if (figures) oldTorch.set(torchKey(row), figures);
  }
  const withTorch = (row: BenchRow): BenchRow => torchOf(row) ? row : { ...row, ...oldTorch.get(torchKey(row)) };
  const byKey = new Map(fresh.rows.map((row) => [rowKey(row), row]));
  const rows = old.rows.map((row) => {
    const replaced = byKey.get(rowKey(row));
    byKey.delete(rowKey(row));
    return replaced ? withTorch(replaced) : row;
  });
  rows.push(...[...byKey.values()].map(withTorch));
  const adapter = old.adapter.length >= fresh.adapter.length ? old.adapter : fresh.adapter;
  return { ...old, ...fresh, adapter, rows };
}

async function readBaseline(path: string): Promise<Baseline | null> {
  let old: Baseline;
  try {
    old = JSON.parse(await Deno.readTextFile(path));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw new Error(`${path}: not a baseline to merge into (${e})`);
  }
  if (typeof old?.adapter !== "string" || !Array.isArray(old.rows)) {
    throw new Error(`${path}: not a baseline (no adapter string and rows array)`);
  }
  return old;
}

/**
 * Writes a run's baseline to `path`, merged into the file already there ({@link mergeBaseline}).
 *
 * @param path the JSON file
 * @param fresh the run's baseline
 * @returns what was written
 * @throws Error when the file is not a baseline or was taken on another adapter
 */
export async function writeBaseline(path: string, fresh: Baseline): Promise<Baseline> {
  const merged = mergeBaseline(await readBaseline(path), fresh);
  await Deno.writeTextFile(path, JSON.stringify(merged, null, 1) + "\n");
  return merged;
}

/** A torch timing log read from `--torch`: its path and its parsed JSON (`timing.py`'s output). */
export interface TorchLog {
  path: string;
  // deno-lint-ignore no-explicit-any
  log: any;
}

/**
 * Reads the torch timing logs a bench's `--torch` names (comma-separated paths, in order).
 *
 * @param list the option's value, or undefined for none
 * @returns each path with its parsed JSON
 * @throws Error naming a file that cannot be read or is not JSON
 */
export async function readTorchLogs(list: string | undefined): Promise<TorchLog[]> {
  const logs: TorchLog[] = [];
  for (const path of (list ?? "").split(",").filter((s) => s !== "")) {
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch (e) {
      throw new Error(`--torch: cannot read ${path} (${(e as Error).message})`);
    }
    try {
      logs.push({ path, log: JSON.parse(text) });
    } catch (e) {
      throw new Error(`--torch: ${path} is not JSON (${(e as Error).message})`);
    }
  }
  return logs;
}

/**
 * A baseline's fields but its rows, as both image benches write them: the adapter, the runtime, the
 * date, how the figures were taken, where torch's figures came from (when any did) and the config.
 *
 * @param gpu the device the rows are measured on
 * @param fields the run's date, method and config name
 * @param torch the torch logs read ({@link readTorchLogs})
 * @returns the header {@link runStages} takes
 */
export function benchHeader(
  gpu: ResidentDevice,
  fields: { date: string; method: string; config: string },
  torch: readonly TorchLog[],
): StageRun<string>["header"] {
  return {
    adapter: gpu.adapter.description || gpu.adapter.vendor,
    runtime: `Deno ${Deno.version.deno} (WebGPU)`,
    date: fields.date,
    method: fields.method,
    ...(torch.length > 0
      ? { torch: torch.map(({ path, log }) => `${path}: torch ${log.torch} on ${log.device}`).join("; ") }
      : {}),
    config: fields.config,
  };
}

/** What {@link runStages} runs. */
export interface StageRun<S extends string> {
  /** The stages to run, in order. */
  stages: readonly S[];
  /** Each stage's rows. */
  make: Record<S, () => Promise<BenchRow[]>>;
  /** The baseline's fields but its rows. */
  header: { adapter: string; runtime: string; date: string; [field: string]: unknown };
  /** Torch's figures for a row, from each log read (applied in order). */
  torch: ((row: BenchRow) => TorchFigures | undefined)[];
  /** The baseline file to merge into, if any. */
  json?: string;
}

/**
 * Runs a bench's stages in order: each stage's rows get torch's figures, go to stderr as they come, and
 * are merged into `json` as soon as the stage is done (a run cut short keeps the stages it finished).
 * A `json` that is not a baseline, or one taken on another adapter, is refused before any stage runs.
 *
 * @param run the stages, the header, the torch figures and the file
 * @returns the baseline written (or the run's own, without `json`)
 * @throws Error from a stage, or for a file it may not merge into
 */
export async function runStages<S extends string>(run: StageRun<S>): Promise<Baseline> {
  const rows: BenchRow[] = [];
  const baseline = (): Baseline => ({ ...run.header, rows });
  if (run.json) mergeBaseline(await readBaseline(run.json), baseline());
  let written: Baseline = baseline();
  for (const stage of run.stages) {
    console.error(`${stage}...`);
    for (let row of await run.make[stage]()) {
      for (const figures of run.torch) row = { ...row, ...figures(row) };
      console.error(JSON.stringify(row));
      rows.push(row);
    }
    if (run.json) written = await writeBaseline(run.json, baseline());
  }
  return run.json ? written : baseline();
}

/**
 * A comma-separated option's values, each one of `allowed`.
 *
 * @param text the option's value
 * @param option the option's name, for messages
 * @param allowed the values it may hold
 * @returns the values, in order, without repeats
 * @throws Error naming the option and a value it may not hold
 *
 * @example
 * ```ts
 * import { listOption } from "./bench_rows.ts";
 * listOption("1024,512", "sizes", (v) => /^\d+$/.test(v)); // ["1024", "512"]
 * ```
 */
export function listOption(
  text: string,
  option: string,
  allowed: readonly string[] | ((value: string) => boolean),
): string[] {
  const values = [...new Set(text.split(",").map((v) => v.trim()).filter((v) => v !== ""))];
  const ok = typeof allowed === "function" ? allowed : (v: string) => allowed.includes(v);
  const bad = values.find((v) => !ok(v));
  if (values.length === 0 || bad !== undefined) {
    const what = typeof allowed === "function" ? "" : `: each one of ${allowed.join(", ")}`;
    throw new Error(`--${option} must be a comma-separated list${what}; got "${text}"`);
  }
  return values;
}

/**
 * The most bytes live on the device while `work` runs, counted from the bytes live when it starts
 * (`ResidentDevice.resetPeakMemory`).
 *
 * @param gpu the device
 * @param work the stage
 * @returns the stage's result and the peak
 */
export async function withPeak<T>(
  gpu: ResidentDevice,
  work: () => Promise<T>,
): Promise<{ result: T; peakBytes: number }> {
  gpu.resetPeakMemory();
  const result = await work();
  return { result, peakBytes: gpu.memory.peakBytes };
}

/**
 * `--profile DIR`: where a stage's GPU time goes. Each program is timed dispatch by dispatch
 * (harness/timing.ts `profileProgram`, each dispatch in a pass of its own, median of 3), the sums by
 * kernel are printed to stderr with their share, TFLOP/s and GB/s, and every dispatch is written to
 * `path` as JSON (`{ what, adapter, date, sumMs, byKernel, dispatches }`).
 *
 * @param gpu the device
 * @param what the stage, e.g. `dit-step 1024x1024 f32`
 * @param programs the stage's programs, in order (copies between them are not timed)
 * @param path the JSON file
 * @returns the sums by kernel
 */
export async function writeProfile(
  gpu: ResidentDevice,
  what: string,
  programs: readonly Program[],
  path: string,
): Promise<KernelTime[]> {
  const dispatches: (DispatchTime & { program: string })[] = [];
  for (const [i, program] of programs.entries()) {
    // The clocks are warmed before the first program only: the next ones follow it straight away.
    const times = await profileProgram(gpu, program, i === 0 ? {} : { clockWarmupMs: 0 });
    for (const t of times) dispatches.push({ ...t, program: program.name });
  }
  const byKernel = profileByKernel(dispatches);
  const sumMs = byKernel.reduce((s, k) => s + k.ms, 0);
  console.error(`profile of ${what}: ${dispatches.length} dispatches, ${sumMs.toFixed(2)} ms summed`);
  for (const k of byKernel) {
    const share = (100 * k.ms / sumMs).toFixed(1).padStart(5);
    const rate = `${(k.flops / k.ms / 1e9).toFixed(1)} TFLOP/s, ${(k.bytes / k.ms / 1e6).toFixed(0)} GB/s`;
    console.error(
      `  ${k.kernel.padEnd(36)} ${String(k.dispatches).padStart(5)}  ${
        k.ms.toFixed(3).padStart(10)
      } ms ${share}%  ${rate}`,
    );
  }
  const date = new Date().toISOString();
  await Deno.writeTextFile(
    path,
    JSON.stringify({ what, adapter: gpu.adapter.description, date, sumMs, byKernel, dispatches }, null, 1) + "\n",
  );
  return byKernel;
}

/**
 * A view of `store` that adds the wall time of each read to `clock.ms`: what a whole-image row spent
 * making (synthetic) or reading (a file) weights, the part of its wall clock a faster store changes.
 *
 * @param store the store
 * @param clock the milliseconds spent so far (the caller zeroes it)
 * @returns the view
 *
 * @example
 * ```ts
 * import { clockedStore } from "./bench_rows.ts";
 * import { syntheticStore } from "./synthetic_store.ts";
 * const clock = { ms: 0 };
 * const store = clockedStore(syntheticStore([{ name: "w", shape: [256, 256] }], () => ({ center: 0, half: 1 })), clock);
 * await store.readFloat32("w");
 * clock.ms > 0; // true
 * ```
 */
export function clockedStore(store: TensorStore, clock: { ms: number }): TensorStore {
  const timed = <A extends unknown[], R>(read: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
    const t0 = performance.now();
    try {
      return await read(...args);
    } finally {
      clock.ms += performance.now() - t0;
    }
  };
  return {
    tensors: store.tensors,
    metadata: store.metadata,
    info: (name) => store.info(name),
    read: timed((name: string) => store.read(name)),
    readFloat32: timed((name: string) => store.readFloat32(name)),
    readRows: timed((name: string, row0: number, rows: number) => store.readRows(name, row0, rows)),
  };
}

/**
 * Where a whole image's wall clock went, from `onStep`'s times: from the start to the first step's end
 * (prompt, loads, caption refiner, a step), the median of the later steps, and after the last (the
 * decoder's load and decode, the read-back), in ms to the microsecond.
 *
 * @param start when the image started
 * @param stepsAt when each step ended
 * @param end when the image was returned
 * @returns the three figures (`stepMs` null for one step)
 *
 * @example
 * ```ts
 * import { stepClock } from "./bench_rows.ts";
 * stepClock(0, [500, 600, 720, 800], 1000); // { firstStepMs: 500, stepMs: 100, afterStepsMs: 200 }
 * ```
 */
export function stepClock(
  start: number,
  stepsAt: readonly number[],
  end: number,
): { firstStepMs: number; stepMs: number | null; afterStepsMs: number } {
  const round = (x: number) => Math.round(x * 1e3) / 1e3;
  const later = stepsAt.slice(1).map((t, i) => t - stepsAt[i]).sort((a, b) => a - b);
  return {
    firstStepMs: round(stepsAt[0] - start),
    stepMs: later.length > 0 ? round(later[Math.floor(later.length / 2)]) : null,
    afterStepsMs: round(end - stepsAt[stepsAt.length - 1]),
  };
}

/**
 * Qwen3's byte-level BPE and T5's SentencePiece tokenizers: from `dir` (the oracle pack's layout:
 * `qwen3/{vocab.json,merges.txt,tokenizer_config.json}`, `t5/spiece.model`), or from llm/fixtures'
 * copies of the same files when `dir` is undefined.
 *
 * @param dir the directory, or undefined
 * @returns the two tokenizers
 * @throws Error naming a missing file
 */
export async function benchTokenizers(dir?: string): Promise<{ qwen: Tokenizer; t5: SentencePieceTokenizer }> {
  if (dir === undefined) {
    return { qwen: loadQwenTokenizer(await qwenFiles()), t5: new SentencePieceTokenizer(t5Model()) };
  }
  const read = async (path: string) => {
    try {
      return await Deno.readFile(`${dir}/${path}`);
    } catch (e) {
      throw new Error(`--tokenizer ${dir}: cannot read ${path} (${(e as Error).message})`);
    }
  };
  const qwen = loadQwenTokenizer({
    vocab: await read("qwen3/vocab.json"),
    merges: await read("qwen3/merges.txt"),
    tokenizerConfig: await read("qwen3/tokenizer_config.json"),
  });
  return { qwen, t5: new SentencePieceTokenizer(await read("t5/spiece.model")) };
}

/**
 * A tokenizer whose ids are `tokenizer`'s taken modulo `vocab`: a tiny model's stand-in that still does
 * the real tokenizer's work (its ids would not fit the tiny vocabulary).
 *
 * @param tokenizer the real tokenizer
 * @param vocab the tiny model's vocabulary size
 * @returns the folded tokenizer (encode only is folded; decode takes folded ids as the real ones)
 */
export function foldedTokenizer<T extends Pick<Tokenizer, "vocabSize" | "encode">>(tokenizer: T, vocab: number): T {
  if (tokenizer.vocabSize <= vocab) return tokenizer;
  return new Proxy(tokenizer, {
    get(target, property, receiver) {
      if (property === "encode") {
        return (...args: Parameters<T["encode"]>) =>
          (target.encode as (...a: unknown[]) => number[])(...args).map((id) => id % vocab);
      }
      if (property === "vocabSize") return vocab;
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
