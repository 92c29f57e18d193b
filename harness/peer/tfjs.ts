/**
 * A peer to compare our kernels with: TensorFlow.js's WebGPU backend (4.22.0), run in this Deno
 * process on the same `GPUDevice`, timing the same op shapes. A dev tool, not part of the package,
 * and Deno-only (it reads files and runs as a script).
 *
 * Loading. The npm packages are installed under `harness/peer/npm/` (`deno task peer:install`,
 * from the committed lockfile; see README.md), which is pruned to the four files the peer reads
 * ({@link TFJS_FILES}, about 2 MB), and loaded from there with `require` at run time: nothing is
 * fetched when the peer runs, and a machine with no registry needs only that folder carried beside
 * the tree. Both are the packages' CommonJS builds, and the backend's own
 * `require("@tensorflow/tfjs-core")` resolves to the same file, so one TF.js instance holds the
 * engine. (Deno resolves the ES-module build's bare core import through the package's `main`,
 * which is that CommonJS file, so importing the ES builds gives two instances.) TF.js picks its
 * platform when it loads, so for the load only `process` is hidden (or it would take the Node
 * platform) and `window.document` is stubbed (so it takes the browser one: `fetch`,
 * `performance.now`, `TextEncoder`); both are restored after.
 *
 * The npm files sit in `npm/` rather than beside this module because a `package.json` makes Deno
 * format and lint its folder with default options instead of the project's.
 *
 * Memory. After each `time()` or `check()` the case's inputs are disposed and the buffers TF.js
 * pooled for reuse are destroyed ({@link releasePool}), so a pass over many large shapes holds one
 * case's buffers at a time.
 *
 * Device. TF.js's own `webgpu` backend factory would request its own adapter; it is replaced by
 * one that constructs `WebGPUBackend` on the caller's device, which is never destroyed here.
 * `WEBGPU_CPU_FORWARD` is turned off, or inputs under 1,000 elements that were never uploaded
 * would be computed on the CPU. One peer exists at a time: TF.js's engine is process-global.
 *
 * Timing ({@link TIMING_METHOD}), matched to ours (harness/timing.ts) where TF.js lets it be:
 * `tf.time()` on this backend ends the compute pass after every kernel and brackets the next with
 * `timestamp-query` writes, so its `kernelMs` is GPU time summed over the op's kernels (the gaps
 * between them excluded). The same defaults (3 warm-up calls, 10 timed, at least 5), the same
 * input rotation ({@link rotationSets}: a working set under the 50 MiB cache is cycled over enough
 * copies that a call does not find the last one's inputs cached; the output buffer is TF.js's,
 * reused from its pool), and the same statistics ({@link summarizeNs}: median, extremes,
 * quartiles). A call whose GPU time reads zero or exceeds its wall time throws {@link
 * TimestampUnavailableError} rather than being reported. Before any timing, the op runs once
 * inside validation and out-of-memory error scopes and its output is compared with a CPU
 * computation from the same inputs ({@link peerCase}), at every element up to 4,096 and at 513
 * spread and pseudo-random ones beyond, so a wrong result is never timed.
 *
 * @module
 */

import { createRequire } from "node:module";
import {
  rotationSets,
  type SampleStats,
  summarizeNs,
  TimestampUnavailableError,
  type TimingOptions,
} from "../timing.ts";
import {
  isPeerOp,
  PEER_OPS,
  type PeerCase,
  peerCase,
  type PeerOp,
  type PeerShape,
  type TfOps,
  type TfTensor,
} from "./cases.ts";

export { PEER_OPS, type PeerOp, type PeerShape, type TfTensor };

/** TF.js's version this peer is written against (pinned in npm/package.json). */
export const TFJS_VERSION = "4.22.0";

/** The files the peer loads, relative to `harness/peer/npm/node_modules/`: what must be carried. */
export const TFJS_FILES: readonly string[] = [
  "@tensorflow/tfjs-core/package.json",
  "@tensorflow/tfjs-core/dist/tf-core.node.js",
  "@tensorflow/tfjs-backend-webgpu/package.json",
  "@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.node.js",
];

/** How the figures are taken, for reports. */
export const TIMING_METHOD: string =
  "TF.js 4.22 WebGPU kernel time: tf.time() kernelMs, GPU timestamp-query at the begin and end of the compute " +
  "pass of each kernel, summed over the op's kernels; median of the timed runs after the warm-up runs, inputs " +
  "rotated over sets as harness/timing.ts does; output first checked against a CPU computation from the same inputs";

const NODE_MODULES = new URL("./npm/node_modules/", import.meta.url);

/** The TF.js API the peer exposes: the ops of {@link TfOps} and a few engine calls. */
export interface TfjsApi extends TfOps {
  readonly version_core: string;
  env(): { set(flag: string, value: unknown): void };
  registerBackend(name: string, factory: () => unknown, priority?: number): boolean;
  findBackendFactory(name: string): unknown;
  removeBackend(name: string): void;
  setBackend(name: string): Promise<boolean>;
  backend(): unknown;
  tidy<T>(fn: () => T): T;
  time(fn: () => void): Promise<{ kernelMs: number; wallMs: number; getExtraProfileInfo?: () => string }>;
  memory(): { numTensors: number };
}

/** A timing of one op at one shape; the statistics are of GPU time per call, kernels summed. */
export interface PeerTiming extends SampleStats {
  /** Kernels one call dispatches. */
  kernels: number;
  /** The TF.js programs that ran, in order, e.g. `["BinaryOpProgram"]`. */
  programs: string[];
  /** Every timed call, in milliseconds, in run order. */
  samplesMs: number[];
  /** Untimed calls before them. */
  warmup: number;
  /** Input sets rotated over ({@link rotationSets}; TF.js reuses its output buffer from a pool). */
  sets: number;
  /** Bytes of one set: the inputs and the output. */
  workingSetBytes: number;
  /** Output elements compared with the CPU before timing. */
  checked: number;
}

/** TF.js's WebGPU backend on our device. */
/** Options of {@link TfjsPeer.time}: harness/timing.ts's, and a hook run right before the timed calls. */
export interface PeerTimingOptions extends TimingOptions {
  /**
   * Runs after the inputs are uploaded and checked, right before the warm-up and timed calls: the
   * bench warms the GPU's clocks here (harness/timing.ts, `warmClocks`), as it does before its own figures.
   */
  beforeTiming?: () => Promise<unknown>;
}

export interface TfjsPeer {
  /** TF.js's version. */
  readonly version: string;
  /** The device TF.js's backend runs on: the one it was created with. */
  readonly device: GPUDevice;
  /** The loaded TF.js API, with the `webgpu` backend active, for calls beyond {@link PEER_OPS}. */
  readonly tf: TfjsApi;
  /** How {@link time} measures. */
  readonly method: string;
  /**
   * Runs `op` once at `args`, checks its output against the CPU, and times it.
   *
   * @param op an op name (see {@link PEER_OPS})
   * @param args its arguments
   * @param options timed calls (a number, or `samples`: at least 5, default 10), `warmup` (default
   *   3), the cache size and caps {@link rotationSets} reads (harness/timing.ts's options), and
   *   `beforeTiming`
   * @returns the statistics and the runs, or undefined when TF.js has no such op
   * @throws Error when the output is wrong or WebGPU reports an error
   * @throws TimestampUnavailableError when a call's GPU time reads zero or exceeds its wall time
   */
  time(op: string, args: PeerShape, options?: number | PeerTimingOptions): Promise<PeerTiming | undefined>;
  /**
   * Runs `op` once at `args` and checks its output against the CPU, without timing it.
   *
   * @param op an op name
   * @param args its arguments
   * @returns the number of elements checked, or undefined when TF.js has no such op
   * @throws Error naming the first element outside tolerance, or WebGPU's error
   */
  check(op: string, args: PeerShape): Promise<number | undefined>;
  /** Removes the backend (freeing TF.js's buffers), leaving the device alone. */
  dispose(): void;
}

/**
 * Whether the peer's files are installed beside this module.
 *
 * @returns the first missing file's path, or undefined when all are present
 */
export async function missingTfjsFile(): Promise<string | undefined> {
  for (const file of TFJS_FILES) {
    const url = new URL(file, NODE_MODULES);
    try {
      await Deno.stat(url);
    } catch {
      return url.pathname;
    }
  }
  return undefined;
}

/** What {@link load} returns: the TF.js API and the backend's class. */
interface Loaded {
  tf: TfjsApi;
  WebGPUBackend: new (device: GPUDevice, info?: unknown) => unknown;
}

let loaded: Loaded | undefined;
let active: TfjsPeer | undefined;

/**
 * Creates the peer: loads TF.js from `harness/peer/npm/node_modules` and makes its `webgpu` backend
 * run on `device`.
 *
 * @param device our device; it must have the `timestamp-query` feature
 * @returns the peer
 * @throws TimestampUnavailableError when the device lacks timestamp-query
 * @throws Error when the files are not installed, TF.js refuses the backend, or another peer has
 *   not been disposed
 *
 * @example
 * ```ts ignore
 * // ignore: needs TF.js installed by `deno task peer:install` and a device with timestamp-query
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { createTfjsPeer } from "./tfjs.ts";
 * const gpu = await acquireDevice();
 * const peer = await createTfjsPeer(gpu.device);
 * console.log(await peer.time("add", [1 << 20]));
 * peer.dispose();
 * ```
 */
export async function createTfjsPeer(device: GPUDevice): Promise<TfjsPeer> {
  if (!device.features.has("timestamp-query")) {
    throw new TimestampUnavailableError("the device has no timestamp-query feature (tfjs peer)");
  }
  if (active) throw new Error("tfjs peer: one already exists (TF.js's engine is global); dispose it first");
  const missing = await missingTfjsFile();
  if (missing) {
    throw new Error(`tfjs peer: ${missing} is missing; run \`deno task peer:install\` (harness/peer/README.md)`);
  }
  loaded ??= load();
  const { tf, WebGPUBackend } = loaded;
  if (tf.version_core !== TFJS_VERSION) {
    throw new Error(`tfjs peer: expected TF.js ${TFJS_VERSION}, got ${tf.version_core}`);
  }
  if (tf.findBackendFactory("webgpu")) tf.removeBackend("webgpu");
  tf.registerBackend("webgpu", () => new WebGPUBackend(device, device.adapterInfo));
  if (!await tf.setBackend("webgpu")) throw new Error("tfjs peer: TF.js could not initialise its webgpu backend");
  if ((tf.backend() as { device?: GPUDevice }).device !== device) {
    throw new Error("tfjs peer: TF.js's webgpu backend is not on the given device");
  }
  tf.env().set("WEBGPU_CPU_FORWARD", false);

  const peer: TfjsPeer = {
    version: tf.version_core,
    device,
    tf,
    method: TIMING_METHOD,
    async time(op, args, options = {}) {
      const { samples = 10, warmup = 3, beforeTiming, ...rotation } = typeof options === "number"
        ? { samples: options }
        : options;
      if (!Number.isInteger(samples) || samples < 5) {
        throw new Error(`tfjs peer: samples must be an integer >= 5, got ${samples}`);
      }
      if (!Number.isInteger(warmup) || warmup < 0) {
        throw new Error(`tfjs peer: warmup must be a non-negative integer, got ${warmup}`);
      }
      if (!isPeerOp(op)) return undefined;
      const c = peerCase(op, args);
      const bytes = c.inputs.reduce((sum, x) => sum + x.data.byteLength, 4 * c.outShape.reduce((p, d) => p * d, 1));
      const sets = rotationSets(bytes, warmup + samples, rotation);
      return await withCase(tf, device, c, `tfjs peer ${op} ${JSON.stringify(args)}`, sets, async (run, checked) => {
        const ns: bigint[] = [];
        let programs: string[] = [];
        await beforeTiming?.();
        for (let r = 0; r < warmup + samples; r++) {
          let out: TfTensor | undefined;
          const info = await tf.time(() => {
            out = tf.tidy(() => run(r % sets));
          });
          out?.dispose();
          programs = info.getExtraProfileInfo?.().split(", ").map((p) => p.split(":")[0]) ?? [];
          if (!(info.kernelMs > 0) || !(info.kernelMs <= info.wallMs * 1.01 + 0.01)) {
            const what = `tfjs peer ${op} (${programs.join(", ")})`;
            throw new TimestampUnavailableError(`${what} read ${info.kernelMs} ms of GPU time in ${info.wallMs} ms`);
          }
          if (r >= warmup) ns.push(BigInt(Math.round(info.kernelMs * 1e6)));
        }
        return {
          ...summarizeNs(ns),
          kernels: programs.length,
          programs,
          samplesMs: ns.map((d) => Number(d) / 1e6),
          warmup,
          sets,
          workingSetBytes: bytes,
          checked,
        };
      });
    },
    async check(op, args) {
      if (!isPeerOp(op)) return undefined;
      const label = `tfjs peer ${op} ${JSON.stringify(args)}`;
      return await withCase(tf, device, peerCase(op, args), label, 1, (_, checked) => Promise.resolve(checked));
    },
    dispose() {
      if (active !== peer) return;
      tf.removeBackend("webgpu");
      active = undefined;
    },
  };
  active = peer;
  return peer;
}

/**
 * Uploads `sets` copies of the case's inputs, checks one run on the first inside error scopes,
 * hands `fn` a run on any set, and frees the inputs.
 */
async function withCase<T>(
  tf: TfjsApi,
  device: GPUDevice,
  c: PeerCase,
  label: string,
  sets: number,
  fn: (run: (set: number) => TfTensor, checked: number) => Promise<T>,
): Promise<T> {
  const inputs = Array.from(
    { length: sets },
    () => c.inputs.map(({ data, shape }) => tf.tensor(data, shape, data instanceof Int32Array ? "int32" : "float32")),
  );
  const run = (set: number) => c.run(tf, inputs[set]);
  try {
    device.pushErrorScope("out-of-memory");
    device.pushErrorScope("validation");
    let got: ArrayLike<number> = [], thrown: unknown;
    try {
      const out = tf.tidy(() => run(0));
      try {
        if (out.shape.join() !== c.outShape.join()) {
          throw new Error(`${label}: output shape [${out.shape}], expected [${c.outShape}]`);
        }
        got = await out.data();
      } finally {
        out.dispose();
      }
    } catch (e) {
      thrown = e;
    }
    const validation = await device.popErrorScope();
    const error = (await device.popErrorScope()) ?? validation;
    if (error) throw new Error(`${label}: WebGPU reported: ${error.message}`);
    if (thrown) throw thrown;
    return await fn(run, _checkSampled(got, c.expect, c.tol, label));
  } finally {
    for (const t of inputs.flat()) t.dispose();
    releasePool(tf);
  }
}

/** The part of TF.js 4.22's WebGPU `BufferManager` that {@link releasePool} touches. */
interface BufferPool {
  freeBuffers: Map<string, GPUBuffer[]>;
  numFreeBuffers: number;
  numBytesAllocated: number;
}

/**
 * Destroys the buffers TF.js keeps pooled for reuse once their tensors are disposed, so that a run
 * over many large shapes holds one case's buffers at a time, not all of them (TF.js frees its pool
 * only when the backend is removed). The pool's keys are kept: TF.js's `releaseBuffer` stops
 * pooling once the map is empty. A backend without that pool is left alone.
 *
 * @returns bytes destroyed
 */
function releasePool(tf: TfjsApi): number {
  const pool = (tf.backend() as { bufferManager?: Partial<BufferPool> }).bufferManager;
  if (!(pool?.freeBuffers instanceof Map)) return 0;
  let bytes = 0;
  for (const list of pool.freeBuffers.values()) {
    for (const buffer of list) {
      bytes += buffer.size;
      buffer.destroy();
    }
    list.length = 0;
  }
  pool.numFreeBuffers = 0;
  if (typeof pool.numBytesAllocated === "number") pool.numBytesAllocated -= bytes;
  return bytes;
}

/**
 * Compares `got` with `expect` at every element up to 4,096 elements, else at 513 elements: 256
 * spread evenly, the last, and 256 pseudo-random ones.
 *
 * @param got the output
 * @param expect the CPU's value and error magnitude of element `i`
 * @param tol |got − value| <= atol + rtol · magnitude
 * @param label what is checked, for the message
 * @returns the number of elements checked
 * @throws Error naming the first element outside tolerance (NaN never passes)
 */
export function _checkSampled(
  got: ArrayLike<number>,
  expect: (i: number) => [number, number],
  tol: { atol: number; rtol: number; why?: string },
  label: string,
): number {
  const picks = samplePicks(got.length);
  for (const i of picks) {
    const [value, magnitude] = expect(i);
    const bound = tol.atol + tol.rtol * magnitude;
    if (!(Math.abs(got[i] - value) <= bound)) {
      throw new Error(
        `${label}: element ${i} is ${got[i]}, expected ${value} (|diff| ${Math.abs(got[i] - value)} > ${bound}${
          tol.why ? `: ${tol.why}` : ""
        })`,
      );
    }
  }
  return picks.length;
}

/**
 * The output elements {@link _checkSampled} compares: all of them up to 4,096, else 513 (256
 * spread evenly, the last, 256 pseudo-random). Only the picks are ever listed: listing every
 * index first, as this once did, built a 64 Mi-entry JS array per large output and took tens of
 * seconds per op on the GPU machine.
 *
 * @param n output elements
 * @returns the indices, in checking order
 */
export function samplePicks(n: number): number[] {
  if (n <= 4096) return Array.from({ length: n }, (_, i) => i);
  const picks = Array.from({ length: 256 }, (_, k) => Math.floor(k * n / 256));
  picks.push(n - 1);
  for (let k = 0, s = 12345; k < 256; k++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    picks.push(Math.floor(s / 2 ** 32 * n));
  }
  return picks;
}

/** Loads TF.js core and the WebGPU backend with the environment TF.js needs to see while loading. */
function load(): Loaded {
  const g = globalThis as Record<string, unknown>;
  const saved = (["process", "window"] as const).map((key) => [key, Object.getOwnPropertyDescriptor(g, key)] as const);
  try {
    delete g.process;
    g.window = { document: {} };
    const require = createRequire(NODE_MODULES);
    const tf = require("@tensorflow/tfjs-core") as TfjsApi;
    const { WebGPUBackend } = require("@tensorflow/tfjs-backend-webgpu");
    return { tf, WebGPUBackend };
  } finally {
    for (const [key, descriptor] of saved) {
      if (descriptor) Object.defineProperty(g, key, descriptor);
      else delete g[key];
    }
  }
}

/** Shapes for `deno run -A harness/peer/tfjs.ts [small|large]`: small for a software adapter. */
const SMOKE: Record<"small" | "large", [string, PeerShape][]> = {
  small: [
    ["add", [1 << 16]],
    ["add", [1 << 20]],
    ["mul", [1 << 20]],
    ["addRows", [1024, 1024]],
    ["axpy", [1 << 20]],
    ["relu", [1 << 20]],
    ["relu2", [1 << 20]],
    ["silu", [1 << 20]],
    ["softmax", [256, 1024]],
    ["sum", [256, 1024]],
    ["sum", { shape: [256, 1024], axis: 0 }],
    ["max", [256, 1024]],
    ["mean", [256, 1024]],
    ["transpose", [512, 1024]],
    ["permute", { shape: [4, 64, 8, 64], perm: [0, 2, 1, 3] }],
    ["gather", [4096, 256, 512]],
    ["scatter", [256, 1024, 64]],
    ["matMul", [128, 128, 128]],
    ["matMul", [256, 256, 256]],
    ["matvec", [1024, 1024]],
    ["gelu", [1 << 20]],
  ],
  large: [
    ["add", [1 << 26]],
    ["mul", [1 << 26]],
    ["addRows", [8192, 4096]],
    ["axpy", [1 << 26]],
    ["relu", [1 << 26]],
    ["relu2", [1 << 26]],
    ["silu", [1 << 26]],
    ["softmax", [8192, 8192]],
    ["sum", [8192, 8192]],
    ["sum", { shape: [8192, 8192], axis: 0 }],
    ["max", [8192, 8192]],
    ["mean", [8192, 8192]],
    ["transpose", [8192, 8192]],
    ["permute", { shape: [8, 1024, 32, 128], perm: [0, 2, 1, 3] }],
    ["gather", [32768, 4096, 4096]],
    ["scatter", [8192, 8192, 1024]],
    ["matMul", [4096, 4096, 4096]],
    ["matvec", [8192, 8192]],
  ],
};

const USAGE = `usage: deno task peer [small|large]     (deno run -A harness/peer/tfjs.ts)
  Times TF.js's WebGPU backend (the peer \`deno task bench\` compares with) on a few op shapes on this
  machine's adapter: small ones on a fallback adapter, large ones otherwise, unless named.
  Needs \`deno task peer:install\` first (TF.js 4.22 from npm into harness/peer/npm/node_modules).
  --help   this text`;

if (import.meta.main) {
  if (Deno.args.includes("--help") || Deno.args.includes("-h")) {
    console.log(USAGE);
    Deno.exit(0);
  }
  const unknown = Deno.args.length > 1 ? Deno.args[1] : Deno.args.find((a) => a !== "small" && a !== "large");
  if (unknown !== undefined) {
    console.error(`peer: unknown argument ${unknown}\n${USAGE}`);
    Deno.exit(2);
  }
  const missing = await missingTfjsFile();
  if (missing !== undefined) {
    console.error(`peer: ${missing} is missing: run \`deno task peer:install\` first (harness/peer/README.md)`);
    Deno.exit(1);
  }
  const { acquireDevice } = await import("../device.ts");
  const gpu = await acquireDevice();
  const size = Deno.args[0] === "large" || Deno.args[0] === "small"
    ? Deno.args[0]
    : gpu.adapter.isFallbackAdapter
    ? "small"
    : "large";
  const peer = await createTfjsPeer(gpu.device);
  console.log(`${gpu.adapter.description} · Deno ${Deno.version.deno} · TF.js ${peer.version} · ${size} shapes`);
  console.log(peer.method);
  for (const [op, args] of SMOKE[size]) {
    const t = await peer.time(op, args);
    const what = `${op} ${JSON.stringify(args)}`.padEnd(48);
    const us = (ms: number) => (ms * 1e3).toFixed(1);
    console.log(
      t
        ? `${what} ${us(t.ms).padStart(10)} µs [${us(t.msMin)}, ${us(t.msMax)}] ×${t.sets} sets  ${
          t.programs.join(" + ")
        }`
        : `${what}          — (TF.js has no such op)`,
    );
  }
  peer.dispose();
  gpu.destroy();
}
