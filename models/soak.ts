/**
 * The memory soak, a Deno command-line tool (it reads the fixtures from disk; not part of the
 * published package): many generations on one loaded model, then many load/destroy cycles of every
 * model the project can load without a hub, on whatever adapter is present, watching what stays
 * behind.
 *
 * ```sh
 * deno run -A --v8-flags=--expose-gc models/soak.ts --out models/soak-llvmpipe.json
 * ```
 *
 * 1. Generations: `--generations` N (default 400) on one `LlamaEngine` holding `models/fortune`,
 *    with prompts of seven lengths and eight ways of generating in turn: greedy, seeded sampling
 *    (top-k/top-p, then min-p with small readbacks), aborted midway by `signal`, under a constraint,
 *    under a constraint that runs out of tokens (an error the generation ends with), left by the
 *    consumer after three ids, sampled and aborted. The engine keeps one program per prompt length,
 *    sampler and mask (with its params uniforms), so the first generation of each such shape may add
 *    buffers; every later one must leave the device's live buffers exactly as it found them.
 * 2. Load/destroy cycles: `--cycles` M (default 200) on one device, each loading, using and
 *    destroying in turn the fortune `LlamaEngine` (f32, q8, q4g128 by turns), the Qwen3 encoder and
 *    causal LM on their tiny fixtures, the tiny Z-Image pipeline (resident; every other cycle q8 with
 *    its stages loaded in turn and its DiT's blocks streamed) and the tiny Anima pipeline with
 *    models/qwen3's encoder as its text side. After each destroy the device's live buffers and bytes
 *    must be exactly those before the load, and no buffer made since still alive.
 * 3. Own devices: `--device-cycles` D (default M / 4) cycles that acquire a device, run the same
 *    components on it (the same check), destroy it, and load Z-Image and Anima on devices they make
 *    and destroy themselves.
 *
 * Every `--every` k iterations of each phase it samples the device's live buffers
 * (`ResidentDevice.memory`) and the host's `Deno.memoryUsage()` (after `gc()` where
 * `--v8-flags=--expose-gc` gives one). The report (`--out`, JSON) holds the conditions, the series,
 * every exact check that failed (with the labels of the buffers left behind) and the verdict: live GPU
 * bytes' and the host's growth from the first quarter of each phase's samples to the last, the host's
 * being V8's heap plus its external memory (ArrayBuffers: host copies of weights live there), against
 * `--heap-bound` (bytes, default 8 MiB). RSS is reported, not bounded: drivers and allocators keep
 * what they freed.
 *
 * @module
 */

import { acquireDevice, type DeviceMemory, type ResidentDevice } from "../harness/device.ts";
import {
  bytesSource,
  type Constraint,
  SafetensorsFile,
  SentencePieceTokenizer,
  type TensorStore,
  type WeightFormat,
} from "../llm/mod.ts";
import { LlamaEngine, parseLlamaConfig, type SamplerSpec } from "./llama/mod.ts";
import { openCheckpointDir } from "../llm/safetensors_file.ts";
import { goldenFile } from "./anima/fixtures/recipe.ts";
import { Anima, type AnimaSource } from "./anima/pipeline.ts";
import { qwen3TextEncoder } from "./anima/text.ts";
import { numberFlag, parseBytes, parseCliFlags } from "./cli.ts";
import { Qwen3ForCausalLM } from "./qwen3/causal_lm.ts";
import { parseQwen3Config, type Qwen3Config } from "./qwen3/config.ts";
import { Qwen3Encoder } from "./qwen3/encoder.ts";
import { byteTokenizerFiles, loadTinyIndex, recipeFile } from "./zimage/fixtures/recipe.ts";
import { textEncoderWeightBytes, ZImage, type ZImageLoadOptions } from "./zimage/pipeline.ts";
import { memoryFiles, type ModelFiles, openZImage } from "./zimage/source.ts";
import { ditWeightBytes } from "./zimage/transformer/dit.ts";

/** What to run. */
export interface SoakOptions {
  /** Generations on the one fortune engine. */
  generations: number;
  /** Load/destroy cycles of every component on one device. */
  cycles: number;
  /** Cycles on a device of their own, acquired and destroyed each time. */
  deviceCycles: number;
  /** Sample memory every this many iterations of each phase. */
  every: number;
  /** Prompt lengths the generations use (1 to 7; the first `prompts` of seven). Default 7. */
  prompts?: number;
  /** Most tokens a generation asks for (at least 12: the kinds that stop early need a few past 10). Default 32. */
  maxTokens?: number;
  /** Largest growth of the host's heap plus external memory (bytes, first quarter to last, after gc) the verdict passes. */
  heapBound: number;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** One sample of memory. */
export interface MemorySample {
  phase: "generations" | "cycles" | "device-cycles";
  /** Iterations of the phase done. */
  iteration: number;
  /** Live bytes and buffers on the shared device (0 in device-cycles: their devices are gone). */
  gpuBytes: number;
  gpuBuffers: number;
  /** `Deno.memoryUsage()`. */
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

/** An exact check that failed: what a generation or a destroy left on the device. */
export interface Leftover {
  phase: MemorySample["phase"];
  iteration: number;
  /** The component (cycles) or the generation's kind and shape (generations). */
  what: string;
  bytes: number;
  buffers: number;
  /** Labels and sizes of the buffers made during it and still alive. */
  left: string[];
}

/** What a phase's samples grew by. */
export interface Growth {
  samples: number;
  /** Means of the last quarter of the samples less those of the first quarter. */
  gpuBytes: number;
  gpuBuffers: number;
  heapUsed: number;
  /** ArrayBuffers and other memory outside V8's heap that JS objects hold (host copies of weights). */
  external: number;
  /** What the verdict bounds: `heapUsed + external`. */
  host: number;
  rss: number;
}

/** The report. */
export interface SoakReport {
  conditions: Record<string, unknown>;
  series: MemorySample[];
  /** Generations checked exactly (those whose shape was seen before) and cycles checked. */
  checked: { generations: number; firstOfShape: number; destroys: number };
  /** What the first generation of each shape added (the engine's programs for it). */
  firstOfShape: { shapes: string[]; bytes: number; buffers: number };
  /** Every exact check that failed. */
  leftovers: Leftover[];
  /** Seconds spent per phase, and per component in the cycles (on the shared device and on their own). */
  seconds: Record<string, number>;
  growth: Record<MemorySample["phase"], Growth>;
  verdict: { pass: boolean; reasons: string[] };
}

const gc = (globalThis as { gc?: () => void }).gc;

/** A sample, after a collection, a turn of the event loop (what was waiting on it settles) and another. */
async function sample(phase: MemorySample["phase"], iteration: number, memory: DeviceMemory): Promise<MemorySample> {
  gc?.();
  await new Promise((resolve) => setTimeout(resolve, 0));
  gc?.();
  const m = Deno.memoryUsage();
  return {
    phase,
    iteration,
    gpuBytes: memory.bytes,
    gpuBuffers: memory.buffers,
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
  };
}

function growth(samples: MemorySample[]): Growth {
  const q = Math.max(1, Math.floor(samples.length / 4));
  const mean = (xs: MemorySample[], key: keyof MemorySample) =>
    xs.reduce((s, x) => s + (x[key] as number), 0) / Math.max(1, xs.length);
  const first = samples.slice(0, q), last = samples.slice(-q);
  const d = (key: keyof MemorySample) => Math.round(mean(last, key) - mean(first, key));
  return {
    samples: samples.length,
    gpuBytes: d("gpuBytes"),
    gpuBuffers: d("gpuBuffers"),
    heapUsed: d("heapUsed"),
    external: d("external"),
    host: Math.round(
      mean(last, "heapUsed") + mean(last, "external") - mean(first, "heapUsed") - mean(first, "external"),
    ),
    rss: d("rss"),
  };
}

const FORTUNE = new URL("./fortune/", import.meta.url).pathname;
const QWEN3 = new URL("./qwen3/fixtures/", import.meta.url).pathname;

/** Prompts of seven lengths (fortune-shaped openings). */
const PROMPTS = [
  "A computer is",
  "Q: What",
  "The",
  "Never put off until tomorrow what you can",
  "He who laughs last",
  "It is a truth universally acknowledged that a program",
  "Q: How many programmers does it take to change a light bulb? A:",
];

/** The ways of generating, in turn. */
const KINDS = [
  "greedy",
  "sample",
  "abort",
  "min-p",
  "constraint",
  "constraint runs out",
  "left after 3",
  "sample, abort",
] as const;

/** Host-side inputs every cycle reuses: the fixtures' bytes and configs (the GPU side is loaded each time). */
interface Fixtures {
  fortune: { config: ReturnType<typeof parseLlamaConfig>; tokenizer: SentencePieceTokenizer };
  qwen3: { store: TensorStore; config: Qwen3Config };
  causalLm: { config: Qwen3Config };
  zimage: { files: ModelFiles; staged: ZImageLoadOptions };
  anima: { dit: TensorStore; vae: TensorStore; qwen3: TensorStore; qwen3Config: Qwen3Config };
}

async function loadFixtures(): Promise<Fixtures> {
  const qwen3Store = await SafetensorsFile.open(
    bytesSource(await Deno.readFile(`${QWEN3}anima-tiny-qwen3.safetensors`)),
  );
  const index = await loadTinyIndex();
  const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  const files = memoryFiles({
    "transformer/config.json": json(index.config.dit),
    "transformer/diffusion_pytorch_model.safetensors": recipeFile(index, "dit"),
    "vae/config.json": json(index.config.vae),
    "vae/diffusion_pytorch_model.safetensors": recipeFile(index, "vae"),
    "text_encoder/config.json": json(index.config.text_encoder),
    "text_encoder/model.safetensors": recipeFile(index, "text_encoder"),
    ...byteTokenizerFiles(),
  });
  // A budget that loads each stage when it runs and streams the DiT's blocks (q8 DiT, q8 encoder).
  const checkpoint = await openZImage(files);
  const vaeBytes = checkpoint.vae.tensors.reduce((n, t) => n + 4 * t.shape.reduce((a, b) => a * b, 1), 0);
  const staged = Math.max(
    textEncoderWeightBytes(checkpoint.textEncoder!.config, "q8"),
    ditWeightBytes(checkpoint.config.dit, "q8", true),
    vaeBytes,
  );
  const animaQwen3 = await goldenFile("tiny", "weights_qwen3");
  const animaIndex = JSON.parse(await Deno.readTextFile(new URL("./anima/fixtures/index.json", import.meta.url)));
  return {
    fortune: {
      config: parseLlamaConfig(await Deno.readTextFile(`${FORTUNE}config.json`)),
      tokenizer: new SentencePieceTokenizer(await Deno.readFile(`${FORTUNE}tokenizer.model`)),
    },
    qwen3: { store: qwen3Store, config: parseQwen3Config(await Deno.readTextFile(`${QWEN3}anima-tiny-config.json`)) },
    causalLm: { config: parseQwen3Config(await Deno.readTextFile(`${QWEN3}tiny-causal-lm/config.json`)) },
    zimage: { files, staged: { format: "q8", maxResidentBytes: staged } },
    anima: {
      dit: await goldenFile("tiny", "weights_dit"),
      vae: await goldenFile("tiny", "weights_vae"),
      qwen3: animaQwen3,
      qwen3Config: parseQwen3Config({ ...animaIndex.configs.qwen3, model_type: "qwen3" }),
    },
  };
}

/** A component of the load/destroy cycles: loads on `gpu` (or its own device), uses, destroys. */
interface Component {
  name: string;
  run(gpu: ResidentDevice, cycle: number): Promise<void>;
}

const FORMATS: WeightFormat[] = ["f32", "q8", "q4g128"];

function components(f: Fixtures): Component[] {
  return [
    {
      name: "fortune LlamaEngine",
      async run(gpu, cycle) {
        const { store, close } = await openCheckpointDir(FORTUNE);
        let engine: LlamaEngine;
        try {
          engine = await LlamaEngine.load(gpu, store, f.fortune.config, { format: FORMATS[cycle % 3], maxSeq: 32 });
        } finally {
          close();
        }
        try {
          const prompt = [f.fortune.tokenizer.bosId!, ...f.fortune.tokenizer.encode(PROMPTS[cycle % PROMPTS.length])];
          for await (const _ of engine.generate(prompt, { maxTokens: 4 }));
        } finally {
          engine.destroy();
        }
      },
    },
    {
      name: "Qwen3Encoder",
      async run(gpu, cycle) {
        const encoder = await Qwen3Encoder.load(gpu, f.qwen3.store, f.qwen3.config, {
          format: cycle % 2 ? "q8" : "f32",
          hiddenState: cycle % 2 ? -2 : -1,
          embedding: cycle % 4 < 2 ? "gpu" : "host",
        });
        try {
          await encoder.encode([12, 7, 99]);
          await encoder.encode([1, 2, 3, 4, 5, 6, 7]);
          encoder.release(3);
          await encoder.encode([5]);
        } finally {
          encoder.destroy();
        }
      },
    },
    {
      name: "Qwen3ForCausalLM",
      async run(gpu) {
        const { store, close } = await openCheckpointDir(`${QWEN3}tiny-causal-lm`);
        try {
          const lm = await Qwen3ForCausalLM.load(gpu, store, f.causalLm.config);
          try {
            for await (const _ of lm.generate([5, 6, 7], { maxTokens: 4 }));
          } finally {
            lm.destroy();
          }
        } finally {
          close();
        }
      },
    },
    {
      name: "ZImage",
      async run(gpu, cycle) {
        const options = cycle % 2 ? f.zimage.staged : {};
        const model = await ZImage.load(f.zimage.files, { ...options, device: gpu });
        try {
          await aborting(
            cycle,
            (signal, onStep) =>
              model.generate({ prompt: "a fox", width: 16, height: 16, steps: 2, seed: cycle, signal, onStep }),
          );
        } finally {
          model.destroy();
        }
      },
    },
    {
      name: "Anima",
      async run(gpu, cycle) {
        const a = f.anima;
        const encoder = await Qwen3Encoder.load(gpu, a.qwen3, a.qwen3Config);
        try {
          const anima = await Anima.load(animaSource(a, encoder), { device: gpu, format: cycle % 2 ? "q8" : "f32" });
          try {
            await aborting(cycle, (signal, onStep) =>
              anima.generate({
                prompt: "a cat",
                negativePrompt: "blurry",
                width: 32,
                height: 32,
                steps: 2,
                cfg: 4,
                seed: cycle,
                signal,
                onStep,
              }));
          } finally {
            anima.destroy();
          }
        } finally {
          encoder.destroy();
        }
      },
    },
  ];
}

function animaSource(a: Fixtures["anima"], encoder: Qwen3Encoder): AnimaSource {
  const vocab = a.qwen3Config.vocabSize;
  return {
    dit: a.dit,
    vae: a.vae,
    textEncoder: qwen3TextEncoder(encoder, { encode: (s) => [...s].map((c) => c.charCodeAt(0) % vocab) }),
    t5Tokenizer: { encode: (s) => [...s].map((c) => c.charCodeAt(0) % 32).concat(1) },
  };
}

/** Z-Image and Anima on devices they acquire and destroy themselves (no device given). */
async function ownedDevices(f: Fixtures, cycle: number): Promise<void> {
  const model = await ZImage.load(f.zimage.files);
  try {
    await model.generate({ prompt: "a fox", width: 16, height: 16, steps: 1, seed: cycle });
  } finally {
    model.destroy();
  }
  // Anima's text side runs on a device of the caller's, here one of its own too.
  const gpu = await acquireDevice();
  try {
    const encoder = await Qwen3Encoder.load(gpu, f.anima.qwen3, f.anima.qwen3Config);
    try {
      const anima = await Anima.load(animaSource(f.anima, encoder));
      try {
        await anima.generate({
          prompt: "a cat",
          negativePrompt: "blurry",
          width: 32,
          height: 32,
          steps: 1,
          cfg: 4,
          seed: cycle,
        });
      } finally {
        anima.destroy();
      }
    } finally {
      encoder.destroy();
    }
  } finally {
    gpu.destroy();
  }
}

/**
 * Runs an image generation of two steps; every third cycle (the second, fifth...) it is aborted after its first step (the
 * abort error is expected, and the pipeline must still free everything when destroyed).
 */
async function aborting(
  cycle: number,
  generate: (signal: AbortSignal, onStep: () => void) => Promise<unknown>,
): Promise<void> {
  const controller = new AbortController();
  const abort = cycle % 3 === 1;
  try {
    await generate(controller.signal, () => abort && controller.abort(new Error("soak: aborted")));
  } catch (e) {
    if (!abort || e !== controller.signal.reason) throw e;
    return;
  }
  if (abort) throw new Error("soak: an aborted image generation did not end with the abort");
}

/** A constraint allowing `allowed` for `steps` tokens, then nothing (the engine then ends with an error). */
function constraintOf(allowed: ReadonlySet<number>, steps = Infinity): Constraint {
  const none = new Set<number>();
  return { nextAllowed: (prefix) => prefix.length < steps ? allowed : none };
}

/**
 * Runs the soak.
 *
 * @param options counts, sampling, the heap bound, progress
 * @returns the report
 * @throws Error naming a count out of range, before any work; whatever a model throws that the soak
 *   did not ask for (an abort or a constraint running out are expected)
 *
 * @example
 * ```ts
 * import { soak } from "./soak.ts";
 * // Eight generations (one of each kind) on one prompt length; no load/destroy cycles.
 * const report = await soak({ generations: 8, cycles: 0, deviceCycles: 0, every: 4, prompts: 1, maxTokens: 12, heapBound: 2 ** 23 });
 * console.log(report.leftovers.length, report.checked.generations); // 0 8
 * ```
 */
export async function soak(options: SoakOptions): Promise<SoakReport> {
  const { generations, cycles, deviceCycles, every, heapBound } = options;
  for (
    const [name, v, min] of [
      ["generations", generations, 0],
      ["cycles", cycles, 0],
      ["deviceCycles", deviceCycles, 0],
      [
        "every",
        every,
        1,
      ],
    ] as const
  ) {
    if (!Number.isSafeInteger(v) || v < min) throw new Error(`soak: ${name} must be an integer >= ${min}, got ${v}`);
  }
  if (!(heapBound > 0)) throw new Error(`soak: heapBound must be a number > 0, got ${heapBound}`);
  const promptCount = options.prompts ?? PROMPTS.length, tokenCap = options.maxTokens ?? 32;
  if (!Number.isSafeInteger(promptCount) || promptCount < 1 || promptCount > PROMPTS.length) {
    throw new Error(`soak: prompts must be an integer in [1, ${PROMPTS.length}], got ${promptCount}`);
  }
  if (!Number.isSafeInteger(tokenCap) || tokenCap < 12 || tokenCap > 100) {
    throw new Error(`soak: maxTokens must be an integer in [12, 100], got ${tokenCap}`);
  }
  const log = options.log ?? (() => {});
  const started = performance.now();
  const f = await loadFixtures();
  const gpu = await acquireDevice();
  const series: MemorySample[] = [];
  const leftovers: Leftover[] = [];
  const checked = { generations: 0, firstOfShape: 0, destroys: 0 };
  const firstOfShape = { shapes: [] as string[], bytes: 0, buffers: 0 };
  const seconds: Record<string, number> = {};
  const timed = async <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      seconds[key] = Math.round(((seconds[key] ?? 0) + (performance.now() - t0) / 1000) * 10) / 10;
    }
  };

  /**
   * Runs `work`, then compares the device's live buffers with those before it. A check fails on a
   * difference, or on any buffer made during `work` that is still alive: a leaked buffer that the
   * collector frees meanwhile leaves the count, so a difference alone could offset a new leak.
   */
  const exact = async (
    device: ResidentDevice,
    work: () => Promise<void>,
  ): Promise<{ bytes: number; buffers: number; left: () => string[] }> => {
    const before = device.memory, mark = before.made;
    await work();
    const after = device.memory;
    return {
      bytes: after.bytes - before.bytes,
      buffers: after.buffers - before.buffers,
      left: () => device.liveBuffers(mark),
    };
  };

  try {
    // 1. Generations on one engine.
    if (generations > 0) {
      const { config, tokenizer } = f.fortune;
      const loaded = gpu.memory, loadMark = gpu.memory.made;
      const { store, close } = await openCheckpointDir(FORTUNE);
      const engine = await LlamaEngine.load(gpu, store, config, { format: "q8", maxSeq: 128 });
      close();
      const prompts = PROMPTS.slice(0, promptCount).map((p) => [tokenizer.bosId!, ...tokenizer.encode(p)]);
      const allowed = new Set([...tokenizer.encode(" the a of is to and"), ...config.eosTokenIds]);
      const seen = new Set<string>();
      const samplerOf = (kind: typeof KINDS[number], i: number): SamplerSpec =>
        kind === "sample" || kind === "sample, abort"
          ? { mode: "sample", temperature: 0.8, topK: 40, topP: 0.95, seed: i }
          : kind === "min-p"
          ? { mode: "sample", temperature: 1.1, minP: 0.05, seed: i }
          : { mode: "greedy" };
      const shapeOf = (prompt: number[], sampler: SamplerSpec, constraint?: Constraint) =>
        `${prompt.length} tokens, ${sampler.mode}${constraint ? ", constraint" : ""}`;
      const warm = performance.now();
      // Warm-up: one short generation of each shape the kinds below make (prompt length, greedy or
      // sampled, constrained or not), which builds and keeps the engine's programs for it.
      for (const prompt of prompts) {
        for (const [sampler, constraint] of [["greedy"], ["sample"], ["greedy", constraintOf(allowed)]] as const) {
          const spec = samplerOf(sampler, 0);
          const d = await exact(gpu, async () => {
            for await (const _ of engine.generate(prompt, { maxTokens: 2, sampler: spec, constraint }));
          });
          const shape = shapeOf(prompt, spec, constraint);
          seen.add(shape);
          checked.firstOfShape++;
          firstOfShape.shapes.push(shape);
          firstOfShape.bytes += d.bytes;
          firstOfShape.buffers += d.buffers;
        }
      }
      seconds["generations warm-up"] = Math.round((performance.now() - warm) / 100) / 10;
      series.push(await sample("generations", 0, gpu.memory));
      const t0 = performance.now();
      for (let i = 0; i < generations; i++) {
        const kind = KINDS[i % KINDS.length], prompt = prompts[i % prompts.length];
        const sampler = samplerOf(kind, i);
        const constraint = kind === "constraint"
          ? constraintOf(allowed)
          : kind === "constraint runs out"
          ? constraintOf(allowed, 3)
          : undefined;
        const abortAt = kind === "abort" ? 5 : kind === "sample, abort" ? 10 : Infinity;
        const leaveAt = kind === "left after 3" ? 3 : Infinity;
        // 4 to 32 tokens; those a kind ends early get a few more than it lets through.
        const endsAt = Math.min(abortAt, leaveAt);
        const maxTokens = Math.max(4 + (i * 5) % 29, endsAt < Infinity ? endsAt + 2 : 0);
        const controller = new AbortController();
        const shape = shapeOf(prompt, sampler, constraint);
        const d = await exact(gpu, async () => {
          let n = 0;
          try {
            for await (
              const _ of engine.generate(prompt, {
                maxTokens,
                sampler,
                constraint,
                signal: controller.signal,
                ...(kind === "min-p" ? { readEvery: 4, inFlight: 2 } : {}),
              })
            ) {
              if (++n === abortAt) controller.abort(new Error("soak: aborted"));
              if (n === leaveAt) break;
            }
          } catch (e) {
            const expected = (abortAt < Infinity && e === controller.signal.reason) ||
              (kind === "constraint runs out" && /allows no token/.test(String(e)));
            if (!expected) throw e;
          }
        });
        if (seen.has(shape)) {
          checked.generations++;
          const left = d.left();
          if (d.bytes !== 0 || d.buffers !== 0 || left.length > 0) {
            const { bytes, buffers } = d;
            leftovers.push({ phase: "generations", iteration: i, what: `${kind}; ${shape}`, bytes, buffers, left });
          }
        } else {
          seen.add(shape);
          checked.firstOfShape++;
          firstOfShape.shapes.push(shape);
          firstOfShape.bytes += d.bytes;
          firstOfShape.buffers += d.buffers;
        }
        if ((i + 1) % every === 0 || i + 1 === generations) {
          series.push(await sample("generations", i + 1, gpu.memory));
          log(`generations ${i + 1}/${generations}: ${gpu.memory.bytes} bytes in ${gpu.memory.buffers} buffers`);
        }
      }
      seconds.generations = Math.round((performance.now() - t0) / 100) / 10;
      engine.destroy();
      const after = gpu.memory;
      checked.destroys++;
      const left = gpu.liveBuffers(loadMark);
      if (after.bytes !== loaded.bytes || after.buffers !== loaded.buffers || left.length > 0) {
        leftovers.push({
          phase: "generations",
          iteration: generations,
          what: "fortune LlamaEngine.destroy after the generations",
          bytes: after.bytes - loaded.bytes,
          buffers: after.buffers - loaded.buffers,
          left,
        });
      }
    }

    // 2. Load/destroy cycles on the one device.
    const parts = components(f);
    if (cycles > 0) series.push(await sample("cycles", 0, gpu.memory));
    for (let c = 0; c < cycles; c++) {
      for (const part of parts) {
        const d = await exact(gpu, () => timed(part.name, () => part.run(gpu, c)));
        checked.destroys++;
        const left = d.left();
        if (d.bytes !== 0 || d.buffers !== 0 || left.length > 0) {
          leftovers.push({ phase: "cycles", iteration: c, what: part.name, bytes: d.bytes, buffers: d.buffers, left });
        }
      }
      if ((c + 1) % every === 0 || c + 1 === cycles) {
        series.push(await sample("cycles", c + 1, gpu.memory));
        log(`cycles ${c + 1}/${cycles}: ${gpu.memory.bytes} bytes in ${gpu.memory.buffers} buffers`);
      }
    }

    // 3. Cycles on devices of their own.
    if (deviceCycles > 0) {
      series.push(await sample("device-cycles", 0, { bytes: 0, buffers: 0, peakBytes: 0, made: 0 }));
    }
    for (let c = 0; c < deviceCycles; c++) {
      const own = await acquireDevice();
      try {
        for (const part of parts) {
          const d = await exact(own, () => timed(`${part.name}, own device`, () => part.run(own, c)));
          checked.destroys++;
          const left = d.left();
          if (d.bytes !== 0 || d.buffers !== 0 || left.length > 0) {
            const { bytes, buffers } = d;
            leftovers.push({ phase: "device-cycles", iteration: c, what: part.name, bytes, buffers, left });
          }
        }
      } finally {
        own.destroy();
      }
      await timed("ZImage and Anima, devices of their own", () => ownedDevices(f, c));
      if ((c + 1) % every === 0 || c + 1 === deviceCycles) {
        series.push(await sample("device-cycles", c + 1, { bytes: 0, buffers: 0, peakBytes: 0, made: 0 }));
        log(`device cycles ${c + 1}/${deviceCycles}`);
      }
    }
  } finally {
    gpu.destroy();
  }

  const phases = ["generations", "cycles", "device-cycles"] as const;
  // The cycle phases' host figures are taken from the end of their first cycle on (it compiles the
  // pipelines and fills what modules cache once); the generations' warm-up ran before their first sample.
  const from = (s: MemorySample) => s.phase === "generations" || s.iteration > 0;
  const grown = Object.fromEntries(
    phases.map((p) => [p, growth(series.filter((s) => s.phase === p && from(s)))]),
  ) as Record<
    MemorySample["phase"],
    Growth
  >;
  const reasons: string[] = [];
  if (leftovers.length > 0) reasons.push(`${leftovers.length} exact checks found buffers left behind`);
  for (const p of phases) {
    if (grown[p].gpuBytes !== 0) reasons.push(`${p}: live GPU bytes grew by ${grown[p].gpuBytes}`);
    if (grown[p].host > heapBound) {
      reasons.push(`${p}: the host's heap and external memory grew by ${grown[p].host}, over ${heapBound}`);
    }
  }
  if (!gc) reasons.push("no gc() (run with --v8-flags=--expose-gc): the heap figures are not after collection");
  return {
    conditions: {
      adapter: gpu.adapter,
      deno: Deno.version,
      os: `${Deno.build.os} ${Deno.build.arch}`,
      generations,
      cycles,
      deviceCycles,
      every,
      prompts: promptCount,
      maxTokens: tokenCap,
      heapBound,
      gc: gc !== undefined,
      date: new Date().toISOString(),
      seconds: Math.round((performance.now() - started) / 1000),
    },
    series,
    checked,
    firstOfShape,
    leftovers,
    seconds,
    growth: grown,
    verdict: { pass: reasons.length === 0, reasons },
  };
}

const USAGE = `usage: deno run -A --v8-flags=--expose-gc models/soak.ts [--generations N] [--cycles M]
  [--device-cycles D] [--every K] [--prompts P] [--max-tokens T] [--heap-bound BYTES] [--out FILE]
defaults: 400 generations, 200 cycles, D = M / 4, K = 10, P = 7 prompt lengths, T = 32 tokens at
most per generation, heap bound 8MiB; the report is printed without --out`;

if (import.meta.main) {
  try {
    const flags = parseCliFlags(Deno.args, {
      valued: ["generations", "cycles", "device-cycles", "every", "prompts", "max-tokens", "heap-bound", "out"],
      required: [],
      usage: USAGE,
    });
    if (flags === "help") {
      console.log(USAGE);
      Deno.exit(0);
    }
    const cycles = numberFlag(flags, "cycles", true) ?? 200;
    const report = await soak({
      generations: numberFlag(flags, "generations", true) ?? 400,
      cycles,
      deviceCycles: numberFlag(flags, "device-cycles", true) ?? Math.ceil(cycles / 4),
      every: numberFlag(flags, "every", true) ?? 10,
      prompts: numberFlag(flags, "prompts", true),
      maxTokens: numberFlag(flags, "max-tokens", true),
      heapBound: parseBytes(flags.get("heap-bound") ?? "8MiB", "heap-bound"),
      log: (line) => console.error(line),
    });
    report.conditions.command = `deno run -A --v8-flags=--expose-gc models/soak.ts ${Deno.args.join(" ")}`.trim();
    const text = JSON.stringify(report, null, 2) + "\n";
    const out = flags.get("out");
    if (out) await Deno.writeTextFile(out, text);
    else console.log(text);
    console.error(report.verdict.pass ? "pass" : `FAIL: ${report.verdict.reasons.join("; ")}`);
    Deno.exit(report.verdict.pass ? 0 : 1);
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    Deno.exit(2);
  }
}
