/**
 * `deno task bench:llm`: LlamaEngine's speed with weights generated here (no download), per format:
 * prefill of 512 tokens and 256 decode steps after it.
 *
 *     deno task bench:llm [--formats q8,q4g128,f32] [--shape 1b|tiny] [--prefill-chunk N]
 *       [--prefill-activations f32,int8] [--no-host-memory] [--out results.json]
 *     deno task bench:llm --help
 *
 * Shapes: `1b` is Sarashina2.2-1B's (24 layers, hidden 1792, vocab 102,400: 1.41 GB of q8 weights,
 * 5.6 GB of f32), the default on a GPU; `tiny` is TINY_CONFIG with a vocabulary of 512 (2 layers,
 * hidden 48), the default on a fallback (software) adapter, where the 1B shape ran for over 9.5
 * minutes without a figure on a 2-core machine (issue 26) and needs more memory than such a machine
 * may have. Each step of a format's run is announced on
 * stderr as it starts, so a slow adapter shows where it is.
 *
 * `--prefill-activations` (default f32) is the engine's `prefillActivations`: `int8` runs prefill's
 * products on int8 activations (ops/matmul's dp4a GEMMs), for q8 and q4g128 (f32 weights run with
 * f32 activations only); a list (`f32,int8`) runs each format once per value, so one run times both.
 *
 * Results: the last line of stdout is a JSON array, one object per format and prefill activations
 * with its `prefill` and `decode` figures apart (`{ format, prefillActivations, prefill: {...},
 * decode: {...} }`); `--out` writes the whole result (every figure below, the adapter, the shape and
 * config) after each row. The host-memory figure is measured once per format (its first run).
 *
 * Figures per format:
 * - tokens/s by wall clock, as a user sees them: prefill = 512 / (submit of the prompt to its first
 *   token read back, a fence included); decode = 256 / (first token read to the 257th);
 * - GPU time by timestamp queries (decode: 64 steps back to back in one command buffer, one pass
 *   each, at cache length 512; prefill: the 512-row pass alone), median of 3, after a clock warm-up;
 * - bytes a decode step must read (every weight but the embedding table, of which it reads one row,
 *   plus K and V at cache length 640, the middle of the 256 steps) over the GPU time, and its
 *   fraction of two ceilings measured in the same run: the 1 GiB read probe and a read of the same
 *   byte count (small transfers do not reach the big probe's rate);
 * - dispatches per token and host milliseconds per token spent encoding and submitting decode steps;
 * - where the GPU time goes: a decode step and the prefill with each dispatch in a pass of its own,
 *   milliseconds summed per kernel;
 * - where a decode step's GPU time goes between kernels: 64 steps back to back, the time inside the
 *   steps' passes and between them, against the wall clock's time per token;
 * - each decode weight product (one layer's QKV, O, gate/up, down, and the head) in a pass of its
 *   own, median of 3 profiles, against the read probe over the same bytes in the same run;
 * - GPU memory the engine holds beyond its weights and KV cache (activations, params), as a
 *   fraction of the two;
 * - host memory: the generated checkpoint is also written to a temporary converted safetensors
 *   file as it is generated, and a separate process (`--host-memory-child`, with
 *   `--v8-flags=--expose-gc`) loads it through `openCheckpointDir` and `LlamaEngine.load`; its
 *   resident set before opening the file and after the load (after garbage collection), its
 *   growth and whole size against the file's, V8's external memory and the peak (VmHWM). Skipped
 *   with `--no-host-memory`;
 * - agreement of the decode path with the prefill path: the greedy tokens generated step by step
 *   against the argmax of one prefill over the prompt and those tokens (random weights can have
 *   near-ties, so this is reported, not asserted).
 *
 * Weights are random: f32 uniform with standard deviation 1 / sqrt(K) (1 for the embedding), and
 * for q8 / q4g128 random codes in [-127, 127] / [-7, 7] with scales of the same spread, norms near
 * 1. Only their layout and byte count matter for speed.
 *
 * @module
 */

import { acquireDevice, type ResidentDevice } from "../../harness/device.ts";
import { probeBandwidth } from "../../harness/roofline.ts";
import { warmClocks } from "../../harness/timing.ts";
import { type LlamaConfig, SARASHINA_2_2_1B_CONFIG, TINY_CONFIG } from "./config.ts";
import { LlamaEngine, type PrefillActivations } from "./engine.ts";
import { rowBytes } from "./resident.ts";
import { SafetensorsWriter } from "../../llm/safetensors_write.ts";
import { openCheckpointDir } from "../../llm/safetensors_file.ts";
import { outputSpecs, WEIGHT_FORMATS, type WeightFormat } from "../../llm/weights/format.ts";
import { llamaWeightSpecs } from "./weights.ts";
import { convertedMetadata, type LoadedWeight } from "../../llm/weights/load.ts";

const PREFILL = 512;
const DECODE = 256;

/** A xorshift32 stream. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>>= 0);
  };
}

/** Bytes with q8's -128 (0x80) and q4's -8 (nibble 8) mapped to the nearest valid code. */
function validByte(format: "q8" | "q4g128", b: number): number {
  if (format === "q8") return b === 0x80 ? 0x81 : b;
  const lo = (b & 15) === 8 ? 9 : b & 15;
  const hi = (b >> 4) === 8 ? 9 : b >> 4;
  return lo | (hi << 4);
}

/** Random weights in the stored form of `format`, tensor by tensor, in loadWeights' order. */
export function* syntheticWeights(config: LlamaConfig, format: WeightFormat, seed = 1): Generator<LoadedWeight> {
  const next = rng(seed);
  const table = format === "f32" ? null : Uint8Array.from({ length: 256 }, (_, b) => validByte(format, b));
  for (const spec of llamaWeightSpecs(config)) {
    const outs = outputSpecs(spec, format);
    if (spec.role === "norm") {
      const v = Float32Array.from({ length: spec.shape[0] }, () => 0.75 + (next() / 2 ** 32) * 0.5);
      yield { spec, format, parts: [{ ...outs[0], data: new Uint8Array(v.buffer) }] };
      continue;
    }
    const [N, K] = spec.shape;
    const std = spec.role === "embedding" ? 1 : 1 / Math.sqrt(K);
    if (format === "f32") {
      const v = new Float32Array(N * K);
      const a = std * Math.sqrt(3) * 2 / 2 ** 32;
      const b = std * Math.sqrt(3);
      for (let i = 0; i < v.length; i++) v[i] = next() * a - b;
      yield { spec, format, parts: [{ ...outs[0], data: new Uint8Array(v.buffer) }] };
      continue;
    }
    const words = new Uint32Array(outs[0].shape[0] * outs[0].shape[1]);
    for (let i = 0; i < words.length; i++) {
      const w = next();
      words[i] = (table![w & 255] | (table![(w >>> 8) & 255] << 8) | (table![(w >>> 16) & 255] << 16) |
        (table![w >>> 24] << 24)) >>> 0;
    }
    // Uniform codes in [-c, c] have standard deviation about c / sqrt(3).
    const codeStd = format === "q8" ? 127 / Math.sqrt(3) : 7 / Math.sqrt(3);
    const scales = new Float32Array(outs[1].shape.reduce((p, d) => p * d, 1)).fill(std / codeStd);
    yield {
      spec,
      format,
      parts: [{ ...outs[0], data: new Uint8Array(words.buffer) }, { ...outs[1], data: new Uint8Array(scales.buffer) }],
    };
  }
}

/**
 * `weights` passed through, with a line to `log` each time another tenth of the tensors has been
 * handed on (generating and uploading f32's 5 GB takes most of a minute on an H200's host).
 */
function* withProgress(
  weights: Iterable<LoadedWeight>,
  count: number,
  label: string,
  log: (s: string) => void,
): Generator<LoadedWeight> {
  let done = 0;
  let bytes = 0;
  const t0 = performance.now();
  for (const weight of weights) {
    yield weight;
    done++;
    bytes += weight.parts.reduce((sum, part) => sum + part.data.byteLength, 0);
    if (Math.floor(done * 10 / count) > Math.floor((done - 1) * 10 / count)) {
      const seconds = ((performance.now() - t0) / 1000).toFixed(1);
      log(`${label}: ${done}/${count} tensors, ${sized(bytes)}, ${seconds} s`);
    }
  }
}

/** Bytes as GB from 1 GB up, else as MB (a tiny model's weights are a fraction of a MB). */
function sized(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toPrecision(3)} MB`;
}

/** A rate in GB/s: whole from 100 up, else three significant digits (the tiny shape's are below 1). */
function rate(gbPerS: number): string {
  return `${gbPerS >= 100 ? gbPerS.toFixed(0) : gbPerS.toPrecision(3)} GB/s`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function drain(it: AsyncIterable<number>, onToken?: (id: number) => void): Promise<number[]> {
  const out: number[] = [];
  for await (const id of it) {
    onToken?.(id);
    out.push(id);
  }
  return out;
}

/** One format's figures. */
export interface LlmBenchRow {
  format: WeightFormat;
  /** What prefill's products multiply (the engine's `prefillActivations`). */
  prefillActivations: PrefillActivations;
  weightBytes: number;
  residentBytes: number;
  loadMs: number;
  prefill: { tokens: number; wallMs: number; wallTokPerS: number; gpuMs: number | null; gpuTokPerS: number | null };
  decode: {
    tokens: number;
    wallTokPerS: number;
    gpuMsPerToken: number | null;
    gpuTokPerS: number | null;
    dispatchesPerToken: number;
    hostEncodeMsPerToken: number;
    bytesPerToken: number;
    gbPerS: number | null;
    fractionOfProbe: number | null;
    sizeMatchedReadGBs: number | null;
    fractionOfSizeMatched: number | null;
    decodeMatchesPrefill: string;
  };
  /** Buffers the engine holds against its weights and KV cache: what the rest (activations, params) adds. */
  memory: { kvCacheBytes: number; otherBytes: number; overWeightsAndCache: number };
  /**
   * Decode steps back to back (64 at cache length 512, one pass each, median of 3): GPU ms per step
   * inside its pass and between passes, against the wall clock's ms per token.
   */
  decodeTrace: { passMs: number; gapMs: number; wallMsPerToken: number } | null;
  /**
   * Each decode weight product (one layer's, and the head) in a pass of its own, median of 3
   * profiles, against a read of its bytes (weight and scales) in the same run.
   */
  gemvs: { kernel: string; bytes: number; us: number; gbPerS: number; readGBs: number; fraction: number }[] | null;
  /** Host memory of a process that loads the weights from a safetensors file on disk (null: not measured). */
  hostMemory: HostMemory | null;
  /** A decode step at cache length 512 with each dispatch in a pass of its own: GPU ms per kernel kind, summed. */
  profile: { kernel: string; dispatches: number; ms: number }[] | null;
  /** The same for the prefill of 512 tokens. */
  prefillProfile: { kernel: string; dispatches: number; ms: number }[] | null;
}

/** Per-dispatch times summed by kernel label; with several profiles, each kind's median sum. */
function byKind(runs: ({ kernel: string; ms: number }[] | null)[]): LlmBenchRow["profile"] {
  if (runs.some((r) => r === null)) return null;
  const kinds = new Map<string, { kernel: string; dispatches: number; ms: number[] }>();
  for (const [run, each] of runs.entries()) {
    for (const { kernel, ms } of each!) {
      const k = kinds.get(kernel) ?? { kernel, dispatches: 0, ms: runs.map(() => 0) };
      if (run === 0) k.dispatches++;
      k.ms[run] += ms;
      kinds.set(kernel, k);
    }
  }
  return [...kinds.values()].map((k) => ({ kernel: k.kernel, dispatches: k.dispatches, ms: median(k.ms) }));
}

/** What a process that loads a checkpoint file holds on the host. */
export interface HostMemory {
  /** The safetensors file's size. */
  fileBytes: number;
  /** Resident set after acquiring the device, before opening the file (after a GC). */
  rssBeforeBytes: number;
  /** Resident set after the load returned and the file was closed (after a GC). */
  rssAfterBytes: number;
  /** The growth over the file's size. */
  growthOverFile: number;
  /** The whole resident set after the load over the file's size. */
  rssOverFile: number;
  /** V8's external memory (ArrayBuffers) after the load. */
  externalBytes: number;
  /** The resident set's high-water mark (Linux VmHWM), or null. */
  peakRssBytes: number | null;
  /** Milliseconds the load took. */
  loadMs: number;
}

/** Linux's VmHWM of this process, bytes (null elsewhere). */
function peakRss(): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** A full collection where the runtime exposes one (`--v8-flags=--expose-gc`), then a settle. */
async function collect(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The child's side of the host-memory figure: acquire the device, load the checkpoint in `dir`
 * through the file reader and `LlamaEngine.load`, print what the process holds as JSON.
 */
async function hostMemoryChild(dir: string, format: WeightFormat, shape: string): Promise<void> {
  const config = shapeConfig(shape);
  const gpu = await acquireDevice();
  await collect();
  const before = Deno.memoryUsage().rss;
  const t0 = performance.now();
  const { store, close } = await openCheckpointDir(dir);
  const engine = await LlamaEngine.load(gpu, store, config, { format, maxSeq: PREFILL + DECODE });
  close();
  const loadMs = performance.now() - t0;
  await collect();
  const after = Deno.memoryUsage();
  const fileBytes = (await Deno.stat(`${dir}/model.safetensors`)).size;
  const result: HostMemory = {
    fileBytes,
    rssBeforeBytes: before,
    rssAfterBytes: after.rss,
    growthOverFile: (after.rss - before) / fileBytes,
    rssOverFile: after.rss / fileBytes,
    externalBytes: after.external,
    peakRssBytes: peakRss(),
    loadMs,
  };
  engine.destroy();
  gpu.destroy();
  console.log(JSON.stringify(result));
}

/** `weights` passed through, each tensor also written, in order, to a converted checkpoint `dir/model.safetensors`. */
async function* teeToFile(
  weights: Iterable<LoadedWeight>,
  config: LlamaConfig,
  format: WeightFormat,
  dir: string,
): AsyncGenerator<LoadedWeight> {
  const specs = llamaWeightSpecs(config).flatMap((spec) => outputSpecs(spec, format));
  const file = await Deno.open(`${dir}/model.safetensors`, { write: true, create: true, truncate: true });
  try {
    const writer = new SafetensorsWriter(specs, convertedMetadata(format), async (chunk) => {
      for (let done = 0; done < chunk.length;) done += await file.write(chunk.subarray(done));
    });
    for (const weight of weights) {
      for (const part of weight.parts) await writer.write(part.name, part.data);
      yield weight;
    }
    await writer.close();
  } finally {
    file.close();
  }
}

/** Runs the host-memory child on `dir` and returns what it printed. */
async function measureHostMemory(dir: string, format: WeightFormat, shape: string): Promise<HostMemory> {
  const args = ["run", "-A", "--cached-only", "--v8-flags=--expose-gc", import.meta.filename!];
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...args, "--host-memory-child", dir, "--formats", format, "--shape", shape],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`bench:llm: the host-memory process for ${format} failed (${out.code})`);
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  return JSON.parse(lines[lines.length - 1]);
}

/**
 * The decode products' kernel time against a plain read of the same bytes: each product's bytes
 * (weight and scales of one layer's matrix, or the head's) from the format's row sizes, its time per
 * dispatch from the profile, and the read probe run over that many bytes now.
 */
async function gemvFractions(
  gpu: ResidentDevice,
  config: LlamaConfig,
  format: WeightFormat,
  profile: NonNullable<LlmBenchRow["profile"]>,
): Promise<NonNullable<LlmBenchRow["gemvs"]>> {
  const { hiddenSize: H, intermediateSize: F, headDim: D, numAttentionHeads: heads, numKeyValueHeads: kv } = config;
  const shapes: [RegExp, number, number][] = [
    [/self_attn\.qkv/, (heads + 2 * kv) * D, H],
    [/o_proj/, H, heads * D],
    [/gate_up/, 2 * F, H],
    [/down_proj/, H, F],
    [/lm_head|embed_tokens\.weight$/, config.vocabSize, H],
  ];
  const out: NonNullable<LlmBenchRow["gemvs"]> = [];
  for (const k of profile) {
    if (!/^(fused_gemv|matvec)\//.test(k.kernel)) continue;
    const shape = shapes.find(([re]) => re.test(k.kernel));
    if (!shape) continue;
    const [, N, K] = shape;
    const row = rowBytes(format, K);
    const bytes = N * (row.weight + row.scales);
    const us = (k.ms / k.dispatches) * 1000;
    const read = await probeBandwidth(gpu, { kind: "read", perThread: 4, workgroupSize: 256 }, {
      bandwidthBytes: bytes,
    });
    const gbPerS = bytes / us / 1000;
    out.push({ kernel: k.kernel, bytes, us, gbPerS, readGBs: read.figure, fraction: gbPerS / read.figure });
  }
  return out;
}

/** What one format's run measures besides the defaults. */
interface BenchOptions {
  /** Rows of a prefill chunk (the engine's default when absent). */
  prefillChunk?: number;
  /** The engine's `prefillActivations`. */
  prefillActivations: PrefillActivations;
  /** A directory to write the generated checkpoint to, for the host-memory figure (null: none). */
  checkpointDir: string | null;
  shape: string;
}

async function benchFormat(
  gpu: ResidentDevice,
  config: LlamaConfig,
  format: WeightFormat,
  probeGBs: number | null,
  log: (s: string) => void,
  options: BenchOptions,
): Promise<LlmBenchRow> {
  const t0 = performance.now();
  const activations = options.prefillActivations;
  const label = activations === "int8" ? `${format} int8-prefill` : format;
  const generated0 = withProgress(
    syntheticWeights(config, format),
    llamaWeightSpecs(config).length,
    `${label}: generating and loading weights`,
    log,
  );
  const dir = options.checkpointDir;
  const weights = dir === null ? generated0 : teeToFile(generated0, config, format, dir);
  const engine = await LlamaEngine.fromWeights(gpu, config, weights, {
    format,
    maxSeq: PREFILL + DECODE,
    prefillChunk: options.prefillChunk,
    prefillActivations: activations,
  });
  try {
    const loadMs = performance.now() - t0;
    log(`${label}: loaded ${sized(engine.weightBytes)} in ${loadMs.toFixed(0)} ms`);
    const next = rng(7);
    const prompt = Array.from({ length: PREFILL }, () => next() % config.vocabSize);
    log(`${label}: compiling the pipelines (a short generation)`);
    await drain(engine.generate(prompt.slice(0, 8), { maxTokens: 8 })); // compiles every pipeline
    await drain(engine.generate(prompt, { maxTokens: 2 }));
    const timestamps = gpu.device.features.has("timestamp-query");
    if (timestamps) await warmClocks(gpu);
    const prefillWall: number[] = [];
    log(`${label}: prefill of ${PREFILL} tokens by wall clock, 3 runs`);
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      await drain(engine.generate(prompt, { maxTokens: 1 }));
      prefillWall.push(performance.now() - start);
    }
    const stats = { encodeMs: 0, decodeSteps: 0, decodeEncodeMs: 0 };
    log(`${label}: ${DECODE} decode steps by wall clock`);
    const times: number[] = [];
    const generated = await drain(
      engine.generate(prompt, { maxTokens: DECODE + 1, stats }),
      () => times.push(performance.now()),
    );
    const decodeWallMs = times[times.length - 1] - times[0];
    const decodeTokens = generated.length - 1;
    let gpuPrefill: number | null = null;
    let gpuDecode: number | null = null;
    let profile: LlmBenchRow["profile"] = null;
    let prefillProfile: LlmBenchRow["profile"] = null;
    let decodeTrace: LlmBenchRow["decodeTrace"] = null;
    if (timestamps) {
      log(`${label}: GPU time of the prefill and of decode steps, traces and per-kernel profiles`);
      await warmClocks(gpu);
      const p: number[] = [];
      for (let i = 0; i < 3; i++) p.push((await engine.timePrefill(PREFILL))!);
      gpuPrefill = median(p);
      await drain(engine.generate(prompt, { maxTokens: 2 })); // the cache holds the prompt again
      const d: number[] = [];
      for (let i = 0; i < 3; i++) d.push((await engine.timeDecodeSteps(PREFILL, 64))!);
      gpuDecode = median(d);
      const traces: { passMs: number; gapMs: number }[] = [];
      for (let i = 0; i < 3; i++) {
        const t = await engine.traceDecodeSteps(PREFILL, 64);
        if (t) traces.push(t);
      }
      if (traces.length === 3) {
        traces.sort((a, b) => a.passMs + a.gapMs - (b.passMs + b.gapMs));
        decodeTrace = { ...traces[1], wallMsPerToken: decodeWallMs / decodeTokens };
      }
      await warmClocks(gpu);
      const runs = [];
      for (let i = 0; i < 3; i++) runs.push(await engine.profile(1, PREFILL));
      profile = byKind(runs);
      prefillProfile = byKind([await engine.profile(Math.min(PREFILL, engine.chunkRows))]);
    }
    // Decode path against prefill path: argmax of one forward over the prompt and the generated tokens.
    log(`${label}: decode path against prefill path`);
    const check = generated.slice(0, 33);
    engine.reset();
    const logits = await engine.forward([...prompt, ...check.slice(0, -1)]);
    let agree = 0;
    for (let i = 0; i < check.length; i++) {
      const row = logits.subarray((PREFILL - 1 + i) * config.vocabSize, (PREFILL + i) * config.vocabSize);
      let best = 0;
      for (let v = 1; v < row.length; v++) if (row[v] > row[best]) best = v;
      if (best === check[i]) agree++;
    }
    engine.reset();
    const embeddingBytes = config.tieWordEmbeddings ? 0 : engine.embeddingBytes;
    const kvBytes = config.numHiddenLayers * 2 * config.numKeyValueHeads * (PREFILL + DECODE / 2) * config.headDim *
      4;
    const bytesPerToken = engine.weightBytes - embeddingBytes + kvBytes;
    let sizeMatched: number | null = null;
    if (timestamps) {
      const r = await probeBandwidth(gpu, { kind: "read", perThread: 4, workgroupSize: 256 }, {
        bandwidthBytes: bytesPerToken,
      });
      sizeMatched = r.figure;
    }
    const gbPerS = gpuDecode === null ? null : bytesPerToken / gpuDecode / 1e6;
    const prefillWallMs = median(prefillWall);
    const gemvs = profile === null ? null : await gemvFractions(gpu, config, format, profile);
    const kvCacheBytes = config.numHiddenLayers * 2 * config.numKeyValueHeads * engine.maxSeq * config.headDim * 4;
    const otherBytes = engine.residentBytes - engine.weightBytes - kvCacheBytes;
    return {
      format,
      prefillActivations: activations,
      weightBytes: engine.weightBytes,
      residentBytes: engine.residentBytes,
      memory: { kvCacheBytes, otherBytes, overWeightsAndCache: otherBytes / (engine.weightBytes + kvCacheBytes) },
      decodeTrace,
      gemvs,
      hostMemory: null,
      loadMs,
      prefill: {
        tokens: PREFILL,
        wallMs: prefillWallMs,
        wallTokPerS: PREFILL / (prefillWallMs / 1000),
        gpuMs: gpuPrefill,
        gpuTokPerS: gpuPrefill === null ? null : PREFILL / (gpuPrefill / 1000),
      },
      decode: {
        tokens: decodeTokens,
        wallTokPerS: decodeTokens / (decodeWallMs / 1000),
        gpuMsPerToken: gpuDecode,
        gpuTokPerS: gpuDecode === null ? null : 1000 / gpuDecode,
        dispatchesPerToken: engine.dispatchesPerToken,
        hostEncodeMsPerToken: stats.decodeEncodeMs / stats.decodeSteps,
        bytesPerToken,
        gbPerS,
        fractionOfProbe: gbPerS === null || probeGBs === null ? null : gbPerS / probeGBs,
        sizeMatchedReadGBs: sizeMatched,
        fractionOfSizeMatched: gbPerS === null || sizeMatched === null ? null : gbPerS / sizeMatched,
        decodeMatchesPrefill: `${agree}/${check.length}`,
      },
      profile,
      prefillProfile,
    };
  } finally {
    engine.destroy();
  }
}

const USAGE = `usage: deno task bench:llm [options]     (deno run -A models/llama/bench.ts)
  --shape 1b|tiny       the model shape: Sarashina2.2-1B's, or a 2-layer toy (default: tiny on a
                        fallback adapter, such as a software one; 1b otherwise)
  --formats LIST        comma-separated weight formats (default q8,q4g128,f32)
  --prefill-chunk N     rows of a prefill chunk (default: the engine's)
  --prefill-activations LIST
                        what prefill's products multiply, f32 or int8 (the engine's
                        prefillActivations; int8 for q8 and q4g128 only), a run per value
                        (default f32)
  --no-host-memory      skip the host-memory figure (a second process loading a file of the weights)
  --out PATH            write the whole result as JSON (after each format)
  --help                this text
Progress goes to stderr; the last line of stdout is each format's prefill and decode figures as JSON.`;

function shapeConfig(shape: string): LlamaConfig {
  if (shape === "tiny") return { ...TINY_CONFIG, vocabSize: 512, maxPositionEmbeddings: 1024 };
  if (shape === "1b") return SARASHINA_2_2_1B_CONFIG;
  throw new Error(`bench:llm: unknown shape ${shape} (1b or tiny)`);
}

function fmt(v: number | null, digits = 0): string {
  return v === null ? "-" : v.toFixed(digits);
}

const VALUED = ["formats", "shape", "prefill-chunk", "prefill-activations", "out", "host-memory-child"];
const SWITCHES = ["no-host-memory", "help"];

async function main(args: string[]): Promise<void> {
  for (let i = 0; i < args.length; i++) {
    const name = args[i].replace(/^--/, "");
    if (VALUED.includes(name) && args[i].startsWith("--")) i++;
    else if (!SWITCHES.includes(name) || !args[i].startsWith("--")) {
      throw new Error(`bench:llm: unknown argument ${args[i]}\n${USAGE}`);
    }
  }
  if (args.includes("--help")) return console.log(USAGE);
  const flag = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  // f32 last: its 5 GB of weights take longest to generate and load.
  const formats = (flag("formats")?.split(",") ?? ["q8", "q4g128", "f32"]) as WeightFormat[];
  for (const f of formats) {
    if (!(WEIGHT_FORMATS as readonly string[]).includes(f)) throw new Error(`bench:llm: unknown format ${f}`);
  }
  const activationsList = (flag("prefill-activations")?.split(",") ?? ["f32"]) as PrefillActivations[];
  for (const a of activationsList) {
    if (a !== "f32" && a !== "int8") {
      throw new Error(`bench:llm: --prefill-activations: unknown value ${a} (f32 or int8)`);
    }
  }
  if (activationsList.every((a) => a === "int8") && formats.includes("f32")) {
    throw new Error(`bench:llm: --prefill-activations int8 needs quantised weights: drop f32 from --formats`);
  }
  const child = flag("host-memory-child");
  if (child) return await hostMemoryChild(child, formats[0], flag("shape") ?? "1b");
  const gpu = await acquireDevice();
  const shape = flag("shape") ?? (gpu.adapter.isFallbackAdapter ? "tiny" : "1b");
  const config = shapeConfig(shape);
  const chunkFlag = flag("prefill-chunk");
  const prefillChunk = chunkFlag === undefined ? undefined : Number(chunkFlag);
  if (prefillChunk !== undefined && !(Number.isSafeInteger(prefillChunk) && prefillChunk >= 1)) {
    throw new Error(`bench:llm: --prefill-chunk must be a positive integer, got ${chunkFlag}`);
  }
  const hostMemory = !args.includes("--no-host-memory");
  const log = (s: string) => console.error(s);
  const why = flag("shape") !== undefined
    ? "as asked"
    : gpu.adapter.isFallbackAdapter
    ? "the default on a fallback adapter; --shape 1b for Sarashina2.2-1B's"
    : "the default on a GPU; --shape tiny for a toy";
  log(`adapter: ${gpu.adapter.description} (target: ${gpu.adapter.target ?? "portable"}), shape ${shape} (${why})`);
  let probe: number | null = null;
  if (gpu.device.features.has("timestamp-query")) {
    await warmClocks(gpu);
    const bytes = shape === "tiny" ? 32 << 20 : 1 << 30;
    probe = (await probeBandwidth(gpu, { kind: "read", perThread: 4, workgroupSize: 256 }, { bandwidthBytes: bytes }))
      .figure;
    log(`read probe (${sized(bytes)}): ${rate(probe)}`);
  }
  const rows: LlmBenchRow[] = [];
  const out = flag("out");
  const result = {
    bench: "llm",
    date: new Date().toISOString(),
    adapter: gpu.adapter,
    runtime: `Deno ${Deno.version.deno}`,
    shape: shape === "tiny" ? "tiny (TINY_CONFIG, vocab 512)" : "Sarashina2.2-1B (SARASHINA_2_2_1B_CONFIG)",
    config,
    prefillTokens: PREFILL,
    decodeTokens: DECODE,
    readProbeGBs: probe,
    rows,
  };
  const runs = formats.flatMap((format) =>
    // f32 weights have no int8 prefill (the engine refuses it): they run with f32 activations alone.
    activationsList.filter((a) => format !== "f32" || a === "f32").map((a, i) => ({ format, a, first: i === 0 }))
  );
  for (const { format, a: prefillActivations, first } of runs) {
    const label = prefillActivations === "int8" ? `${format} int8-prefill` : format;
    const dir = hostMemory && first ? await Deno.makeTempDir({ prefix: `bench-llm-${format}-` }) : null;
    let row: LlmBenchRow;
    try {
      const options = { prefillChunk, prefillActivations, checkpointDir: dir, shape };
      row = await benchFormat(gpu, config, format, probe, log, options);
      if (dir !== null) {
        log(`${label}: host memory of a process loading the weights from a file`);
        row.hostMemory = await measureHostMemory(dir, format, shape);
      }
    } finally {
      if (dir !== null) await Deno.remove(dir, { recursive: true });
    }
    rows.push(row);
    // Written after each format, so a run cut short keeps what it measured.
    if (out) await Deno.writeTextFile(out, JSON.stringify(result, null, 1) + "\n");
    for (const [what, profile] of [["one decode step", row.profile], ["prefill of 512", row.prefillProfile]] as const) {
      if (!profile) continue;
      const total = profile.reduce((s, k) => s + k.ms, 0);
      log(`${label}: ${what}, a pass per dispatch: ${total.toFixed(3)} ms of kernels`);
      for (const k of profile) log(`  ${k.kernel}: ${k.dispatches} x, ${k.ms.toFixed(4)} ms`);
    }
    const m = row.memory;
    log(
      `${label}: resident ${(row.residentBytes / 1e6).toFixed(1)} MB = weights ${
        (row.weightBytes / 1e6).toFixed(1)
      } + ` +
        `KV ${(m.kvCacheBytes / 1e6).toFixed(1)} + other ${(m.otherBytes / 1e6).toFixed(1)} MB ` +
        `(+${(m.overWeightsAndCache * 100).toFixed(2)}%)`,
    );
    if (row.decodeTrace) {
      const t = row.decodeTrace;
      log(
        `${label}: decode step trace: ${t.passMs.toFixed(3)} ms in its pass + ${
          t.gapMs.toFixed(3)
        } ms between passes ` +
          `(GPU); wall ${t.wallMsPerToken.toFixed(3)} ms/token`,
      );
    }
    for (const g of row.gemvs ?? []) {
      log(
        `  ${g.kernel}: ${sized(g.bytes)} in ${g.us.toFixed(2)} us = ${rate(g.gbPerS)}, ` +
          `read of the same bytes ${rate(g.readGBs)}: ${(g.fraction * 100).toFixed(1)}%`,
      );
    }
    if (row.hostMemory) {
      const h = row.hostMemory;
      log(
        `${label}: host memory loading a ${(h.fileBytes / 1e6).toFixed(1)} MB file: RSS ${
          (h.rssBeforeBytes / 1e6).toFixed(1)
        }` +
          ` -> ${(h.rssAfterBytes / 1e6).toFixed(1)} MB (growth ${h.growthOverFile.toFixed(3)}x, whole ${
            h.rssOverFile.toFixed(3)
          }x the file), external ${(h.externalBytes / 1e6).toFixed(1)} MB, peak ${
            h.peakRssBytes === null ? "-" : (h.peakRssBytes / 1e6).toFixed(1)
          } MB, load ${h.loadMs.toFixed(0)} ms`,
      );
    }
    const d = row.decode;
    log(
      `${label}: prefill ${fmt(row.prefill.wallTokPerS)} tok/s wall (GPU ${fmt(row.prefill.gpuTokPerS)}), ` +
        `decode ${fmt(d.wallTokPerS)} tok/s wall (GPU ${fmt(d.gpuMsPerToken, 3)} ms/token = ${
          fmt(d.gpuTokPerS)
        } tok/s, ` +
        `${d.gbPerS === null ? "- GB/s" : rate(d.gbPerS)}, ${fmt((d.fractionOfProbe ?? NaN) * 100, 1)}% of probe, ` +
        `${fmt((d.fractionOfSizeMatched ?? NaN) * 100, 1)}% of a ${sized(d.bytesPerToken)} read), ` +
        `${d.dispatchesPerToken} dispatches/token, host ${d.hostEncodeMsPerToken.toFixed(3)} ms/token, ` +
        `decode = prefill argmax ${d.decodeMatchesPrefill}`,
    );
  }
  console.log(JSON.stringify(
    result.rows.map((r) => ({
      format: r.format,
      prefillActivations: r.prefillActivations,
      prefill: r.prefill,
      decode: r.decode,
    })),
  ));
  gpu.destroy();
}

if (import.meta.main) {
  try {
    await main(Deno.args);
  } catch (e) {
    console.error((e as Error).message);
    Deno.exit(2);
  }
}
