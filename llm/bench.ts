/**
 * `deno task bench:llm`: LlamaEngine's speed at the Sarashina2.2-1B shape with weights generated here
 * (no download), per format: prefill of 512 tokens and 256 decode steps after it.
 *
 *     deno run -A llm/bench.ts [--formats q8,q4g128,f32] [--shape 1b|tiny] [--out results.json]
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

import { acquireDevice, type ResidentDevice } from "../harness/device.ts";
import { probeBandwidth } from "../harness/roofline.ts";
import { warmClocks } from "../harness/timing.ts";
import { type LlamaConfig, SARASHINA_2_2_1B_CONFIG, TINY_CONFIG } from "./config.ts";
import { LlamaEngine } from "./engine/engine.ts";
import { llamaWeightSpecs, outputSpecs, WEIGHT_FORMATS, type WeightFormat } from "./weights/format.ts";
import type { LoadedWeight } from "./weights/load.ts";

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
      log(`${label}: ${done}/${count} tensors, ${(bytes / 1e9).toFixed(2)} GB, ${seconds} s`);
    }
  }
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
  /** A decode step at cache length 512 with each dispatch in a pass of its own: GPU ms per kernel kind, summed. */
  profile: { kernel: string; dispatches: number; ms: number }[] | null;
  /** The same for the prefill of 512 tokens. */
  prefillProfile: { kernel: string; dispatches: number; ms: number }[] | null;
}

/** Per-dispatch times summed by kernel label. */
function byKind(each: { kernel: string; ms: number }[] | null): LlmBenchRow["profile"] {
  if (!each) return null;
  const kinds = new Map<string, { kernel: string; dispatches: number; ms: number }>();
  for (const { kernel, ms } of each) {
    const k = kinds.get(kernel) ?? { kernel, dispatches: 0, ms: 0 };
    k.dispatches++;
    k.ms += ms;
    kinds.set(kernel, k);
  }
  return [...kinds.values()];
}

async function benchFormat(
  gpu: ResidentDevice,
  config: LlamaConfig,
  format: WeightFormat,
  probeGBs: number | null,
  log: (s: string) => void,
): Promise<LlmBenchRow> {
  const t0 = performance.now();
  const weights = withProgress(
    syntheticWeights(config, format),
    llamaWeightSpecs(config).length,
    `${format}: generating and loading weights`,
    log,
  );
  const engine = await LlamaEngine.fromWeights(gpu, config, weights, {
    format,
    maxSeq: PREFILL + DECODE,
    prefillChunk: PREFILL,
  });
  try {
    const loadMs = performance.now() - t0;
    log(`${format}: loaded ${(engine.weightBytes / 1e9).toFixed(3)} GB in ${loadMs.toFixed(0)} ms`);
    const next = rng(7);
    const prompt = Array.from({ length: PREFILL }, () => next() % config.vocabSize);
    await drain(engine.generate(prompt.slice(0, 8), { maxTokens: 8 })); // compiles every pipeline
    await drain(engine.generate(prompt, { maxTokens: 2 }));
    const timestamps = gpu.device.features.has("timestamp-query");
    if (timestamps) await warmClocks(gpu);
    const prefillWall: number[] = [];
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      await drain(engine.generate(prompt, { maxTokens: 1 }));
      prefillWall.push(performance.now() - start);
    }
    const stats = { encodeMs: 0, decodeSteps: 0, decodeEncodeMs: 0 };
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
    if (timestamps) {
      await warmClocks(gpu);
      const p: number[] = [];
      for (let i = 0; i < 3; i++) p.push((await engine.timePrefill(PREFILL))!);
      gpuPrefill = median(p);
      await drain(engine.generate(prompt, { maxTokens: 2 })); // the cache holds the prompt again
      const d: number[] = [];
      for (let i = 0; i < 3; i++) d.push((await engine.timeDecodeSteps(PREFILL, 64))!);
      gpuDecode = median(d);
      await warmClocks(gpu);
      profile = byKind(await engine.profile(1, PREFILL));
      prefillProfile = byKind(await engine.profile(PREFILL));
    }
    // Decode path against prefill path: argmax of one forward over the prompt and the generated tokens.
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
    return {
      format,
      weightBytes: engine.weightBytes,
      residentBytes: engine.residentBytes,
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

function fmt(v: number | null, digits = 0): string {
  return v === null ? "-" : v.toFixed(digits);
}

async function main(args: string[]): Promise<void> {
  const flag = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  // f32 last: its 5 GB of weights take longest to generate and load.
  const formats = (flag("formats")?.split(",") ?? ["q8", "q4g128", "f32"]) as WeightFormat[];
  for (const f of formats) {
    if (!(WEIGHT_FORMATS as readonly string[]).includes(f)) throw new Error(`bench:llm: unknown format ${f}`);
  }
  const shape = flag("shape") ?? "1b";
  const config = shape === "tiny"
    ? { ...TINY_CONFIG, vocabSize: 512, maxPositionEmbeddings: 1024 }
    : SARASHINA_2_2_1B_CONFIG;
  const gpu = await acquireDevice();
  const log = (s: string) => console.error(s);
  log(`adapter: ${gpu.adapter.description} (target: ${gpu.adapter.target ?? "portable"}), shape ${shape}`);
  let probe: number | null = null;
  if (gpu.device.features.has("timestamp-query")) {
    await warmClocks(gpu);
    const bytes = shape === "tiny" ? 32 << 20 : 1 << 30;
    probe = (await probeBandwidth(gpu, { kind: "read", perThread: 4, workgroupSize: 256 }, { bandwidthBytes: bytes }))
      .figure;
    log(`read probe (${bytes} bytes): ${probe.toFixed(0)} GB/s`);
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
  for (const format of formats) {
    const row = await benchFormat(gpu, config, format, probe, log);
    rows.push(row);
    // Written after each format, so a run cut short keeps what it measured.
    if (out) await Deno.writeTextFile(out, JSON.stringify(result, null, 1) + "\n");
    for (const [what, profile] of [["one decode step", row.profile], ["prefill of 512", row.prefillProfile]] as const) {
      if (!profile) continue;
      const total = profile.reduce((s, k) => s + k.ms, 0);
      log(`${format}: ${what}, a pass per dispatch: ${total.toFixed(3)} ms of kernels`);
      for (const k of profile) log(`  ${k.kernel}: ${k.dispatches} x, ${k.ms.toFixed(4)} ms`);
    }
    const d = row.decode;
    log(
      `${format}: prefill ${fmt(row.prefill.wallTokPerS)} tok/s wall (GPU ${fmt(row.prefill.gpuTokPerS)}), ` +
        `decode ${fmt(d.wallTokPerS)} tok/s wall (GPU ${fmt(d.gpuMsPerToken, 3)} ms/token = ${
          fmt(d.gpuTokPerS)
        } tok/s, ` +
        `${fmt(d.gbPerS)} GB/s, ${fmt((d.fractionOfProbe ?? NaN) * 100, 1)}% of probe, ` +
        `${fmt((d.fractionOfSizeMatched ?? NaN) * 100, 1)}% of a ${(d.bytesPerToken / 1e6).toFixed(0)} MB read), ` +
        `${d.dispatchesPerToken} dispatches/token, host ${d.hostEncodeMsPerToken.toFixed(3)} ms/token, ` +
        `decode = prefill argmax ${d.decodeMatchesPrefill}`,
    );
  }
  console.log(JSON.stringify(result.rows.map((r) => ({ format: r.format, ...r.prefill, ...r.decode }))));
  gpu.destroy();
}

if (import.meta.main) await main(Deno.args);
