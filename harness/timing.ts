/**
 * GPU timing of a {@link KernelPlan} (or a {@link KernelSequence} of them, in one pass) on resident
 * tensors, with timestamp queries only.
 *
 * How a figure is taken (and why):
 * - One command buffer holds `warmup` untimed passes, then `samples` timed passes, each with its own
 *   timestamp pair written at the beginning and end of its compute pass. Deno's fence (the
 *   `mapAsync` that reads the timestamps back) costs ~11 ms whatever the work, so the clock is
 *   never read around it; the host's wall time is kept only as a sanity bound on the sum.
 * - Before that, one separate submission of `warmup` passes compiles the pipeline.
 * - Clocks: a GPU's clock governor lowers its clocks when it idles and raises them only after a
 *   while of work. On the H200 (2026-11-30), after 3 s idle the first ~200 ms of GPU work ran at
 *   low clocks (an elementwise add over 2^26 elements: 0.45 ms a pass, then 0.19; a 4096^3 matmul:
 *   21 ms a pass, then 3.7). The clocks held through 1 s of idle after a busy second, but fell under
 *   a stream of short timings separated by tens of milliseconds of host work (figures up to 4x
 *   slow): the governor follows utilisation, and no gap between figures is safe. A figure taken at
 *   low clocks measures the governor, not the kernel, so before every figure (after the compile
 *   submission, right before the timed one) {@link warmClocks} keeps the device busy for
 *   `clockWarmupMs` (500 ms by default) of GPU time and until an FMA loop's passes stop getting
 *   faster; the timing reports how much it spent.
 * - Ticks are subtracted as BigInt nanoseconds (absolute values exceed 2^53), then converted. The
 *   timed passes must sum to no more than the submission's wall time, or the figure is refused
 *   (ticks that are not nanoseconds would otherwise go unnoticed).
 * - The figure is the median pass; min, max and the quartiles are kept as its spread.
 * - Inputs are random (an op's input maker decides; never zeros). When the working set is smaller
 *   than the cache (50 MiB by default, the H200's L2), passes rotate over several input sets so that
 *   a pass does not find the previous pass's data still cached; the number of sets and whether the
 *   rotation could still fit in the cache are reported.
 * - What a pass's interval covers: wgpu writes both timestamps of a pass at BOTTOM_OF_PIPE on
 *   Vulkan, so an interval runs from the completion of everything encoded before the pass to the
 *   pass's own completion. With one set, each pass's write-after-write dependency on the previous
 *   pass serialises them and the interval is the pass alone; with rotation over independent sets,
 *   consecutive passes may overlap and the interval is the time the pass adds to the stream (a
 *   throughput figure). `cacheBytes: 0` turns rotation off, to compare the two.
 * - Without the `timestamp-query` feature there is no figure: {@link TimestampUnavailableError} is
 *   thrown rather than falling back to a wall clock that would measure the fence.
 *
 * @module
 */

import {
  type BindingSpec,
  type GpuTensor,
  type HostArray,
  type KernelPlan,
  type KernelSequence,
  requireDevice,
  type ResidentDevice,
} from "./device.ts";
import { type BoundDispatch, encodeBound, type Program } from "./program.ts";
import { packParams } from "./params.ts";
import { FMA_PARAMS, type FmaConfig, fmaSource } from "./roofline.wgsl.ts";
import { requireSize } from "./limits.ts";

/** Options for {@link timePlan} and {@link timeResident}. */
export interface TimingOptions {
  /** Timed passes, one timestamp pair each; at least 5, at most 2048. Default 10. */
  samples?: number;
  /** Untimed passes before the timed ones (and in the separate warm-up submission). Default 3. */
  warmup?: number;
  /** Bytes of cache the rotation should defeat. Default 50 MiB (the H200's L2). */
  cacheBytes?: number;
  /** Most input sets to rotate over. Default 64. */
  maxSets?: number;
  /** Most bytes all input sets together may take. Default 1 GiB. */
  maxRotationBytes?: number;
  /**
   * GPU time, in ms, of the clock warm-up ({@link warmClocks}) run right before the timed passes.
   * Default {@link CLOCK_WARMUP_MS}; 0 turns it off.
   */
  clockWarmupMs?: number;
}

/** Summary statistics of the per-pass times, in milliseconds. */
export interface SampleStats {
  /** Median pass time. */
  ms: number;
  /** Fastest pass. */
  msMin: number;
  /** Slowest pass. */
  msMax: number;
  /** First quartile (linear interpolation). */
  msQ1: number;
  /** Third quartile (linear interpolation). */
  msQ3: number;
}

/** A timing: the statistics, every sample, and the conditions it was taken under. */
export interface Timing extends SampleStats {
  /** Every timed pass, in milliseconds, in submission order. */
  samplesMs: number[];
  /** Number of timed passes. */
  samples: number;
  /** Untimed passes before them. */
  warmup: number;
  /** Input sets rotated over (1 = no rotation). */
  sets: number;
  /** Bytes of one set (all bindings). */
  workingSetBytes: number;
  /** Whether all sets together still fit in `cacheBytes` (so the figure may be cache-served). */
  cacheResident: boolean;
  /** Host wall time of the timed submission, fence included (a sanity bound, not a figure). */
  wallMs: number;
  /** GPU time spent warming the clocks just before this figure (0 when `clockWarmupMs` was 0). */
  clockWarmupMs: number;
}

/** Thrown when the device cannot time on the GPU (no `timestamp-query`, or the queries read zero). */
export class TimestampUnavailableError extends Error {
  /**
   * Creates the error.
   *
   * @param reason why no GPU time can be reported
   */
  constructor(reason: string) {
    super(`no GPU time can be reported: ${reason}; the wall clock is not a substitute (it measures Deno's fence)`);
    this.name = "TimestampUnavailableError";
  }
}

/** The most compute passes {@link timestampPasses} times in one submission (4,096 timestamps, WebGPU's query set limit). */
export const MAX_TIMED_PASSES = 2048;

/** Default GPU time, in ms, of a clock warm-up (the H200 needed ~200-400 ms of work to reach full clocks). */
export const CLOCK_WARMUP_MS = 500;
/** GPU time each warm-up pass is sized for once calibrated. */
const WARMUP_PASS_MS = 20;
/** A warm-up round at most this much slower than the fastest before it counts as settled clocks. */
const WARMUP_SETTLED = 0.02;
/** The most GPU time one warm-up spends, settled or not. */
const WARMUP_LIMIT_MS = 3000;

/** The roofline's f32 FMA kernel serves as the warm-up load. */
const WARMUP_KERNEL: FmaConfig = { dtype: "f32", chains: 4, unroll: 1, workgroupSize: 256 };
const WARMUP_SOURCE = fmaSource(WARMUP_KERNEL);
const WARMUP_WORKGROUPS = 1024;

function warmupPlan(iterations: number): KernelPlan {
  return {
    op: "clock warm-up",
    kernel: { variant: "kernel", source: WARMUP_SOURCE, rung: "portable", tried: ["kernel"] },
    bindings: [{ name: "out", dtype: "f32", length: 4, role: "output" }],
    // Chains that start near 0 and contract towards 1 never pass the largest f32: nothing is
    // written, but the compiler cannot drop the loop.
    params: packParams(
      FMA_PARAMS,
      { iters: iterations, threshold: 3.4e38, a: 0.999, b: 0.001, tscale: 1e-3, step: 1e-3 },
      "clock warm-up",
    ),
    workgroups: WARMUP_WORKGROUPS,
    cost: { bytes: 0, flops: 8 * WARMUP_KERNEL.chains * WARMUP_KERNEL.workgroupSize * WARMUP_WORKGROUPS * iterations },
  };
}

/** Options for {@link warmClocks}. */
export interface ClockWarmupOptions {
  /** GPU time to keep the device busy for, in ms. Default {@link CLOCK_WARMUP_MS}. */
  ms?: number;
}

/**
 * Raises the GPU's clocks before a figure is taken: runs an FMA loop (calibrated to ~20 ms passes) until at least `ms` of GPU
 * time, measured by timestamps, has been spent and the passes have stopped getting faster (a round
 * of five no slower than 1.02 x the fastest round before it; at most 3 s). A figure taken right
 * after idle would otherwise include the clock governor's ramp (see the module doc for the H200's).
 *
 * @param gpu the device (must have `timestamp-query`)
 * @param options GPU time to spend
 * @returns the GPU time spent, in ms (0 when `ms` is 0)
 * @throws TimestampUnavailableError without `timestamp-query`
 * @throws Error when `ms` is negative or not finite
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { warmClocks } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const spent = await warmClocks(gpu, { ms: 50 }); // at least 50 ms of GPU time, once the passes stop speeding up
 * gpu.destroy();
 * ```
 */
export async function warmClocks(gpu: ResidentDevice, options?: ClockWarmupOptions): Promise<number> {
  requireDevice("warmClocks", gpu);
  options ??= {};
  checkOptionKeys("warmClocks", options, ["ms"]);
  const ms = options.ms ?? CLOCK_WARMUP_MS;
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`warmClocks: ms must be a finite number >= 0, got ${ms}`);
  if (ms === 0) return 0;
  const sink = gpu.alloc("f32", 4, "clock warm-up sink");
  try {
    // Calibrate the loop to ~20 ms passes (at most 16 times longer per round, so a mismeasured tiny
    // pass cannot make a huge one), then keep going at that length until `ms` is spent and a round
    // is no slower than the fastest before it: the clocks have stopped rising.
    let iterations = 16;
    let calibrated = false;
    let spent = 0;
    let best = Infinity;
    while (spent < WARMUP_LIMIT_MS) {
      const t = await timeResident(gpu, warmupPlan(iterations), [[sink]], { samples: 5, warmup: 0, clockWarmupMs: 0 });
      spent += t.samplesMs.reduce((sum, d) => sum + d, 0);
      if (calibrated) {
        if (spent >= ms && t.ms <= best * (1 + WARMUP_SETTLED)) break;
        best = Math.min(best, t.ms);
      } else if (t.msMax >= WARMUP_PASS_MS / 2) {
        calibrated = true;
        best = t.ms;
      } else {
        const scale = Math.min(16, WARMUP_PASS_MS / Math.max(t.msMax, 1e-3));
        iterations = Math.max(16, Math.min(2 ** 22, Math.round(iterations * scale)));
      }
    }
    return spent;
  } finally {
    sink.buffer.destroy();
  }
}

/**
 * Whether the device was granted `timestamp-query`.
 *
 * @param gpu the device
 * @returns true when compute passes can write timestamps
 */
export function supportsTimestamps(gpu: ResidentDevice): boolean {
  requireDevice("supportsTimestamps", gpu);
  return gpu.device.features.has("timestamp-query");
}

/**
 * Median, extremes and quartiles of per-pass durations given as BigInt nanoseconds.
 *
 * @param ns durations in nanoseconds (at least one)
 * @returns the statistics in milliseconds
 * @throws Error when `ns` is empty
 *
 * @example
 * ```ts
 * import { summarizeNs } from "./timing.ts";
 * summarizeNs([3000000n, 1000000n, 2000000n]).ms; // 2
 * ```
 */
export function summarizeNs(ns: readonly bigint[]): SampleStats {
  if (ns.length === 0) throw new Error("summarizeNs: no samples");
  const sorted = [...ns].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const at = (q: number): number => {
    const pos = q * (sorted.length - 1), lo = Math.floor(pos), hi = Math.ceil(pos);
    // Interpolate in BigInt to keep nanosecond precision, then convert once.
    const a = sorted[lo], b = sorted[hi];
    const frac = pos - lo;
    return (Number(a) + Number(b - a) * frac) / 1e6;
  };
  return {
    ms: at(0.5),
    msMin: Number(sorted[0]) / 1e6,
    msMax: Number(sorted[sorted.length - 1]) / 1e6,
    msQ1: at(0.25),
    msQ3: at(0.75),
  };
}

/** What the harness times: one dispatch, or a sequence of dispatches in one pass. */
export type Timed = KernelPlan | KernelSequence;

/**
 * Whether a timed unit is a sequence.
 *
 * @param timed a plan or a sequence
 * @returns true for a {@link KernelSequence}
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { isSequence } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * console.log(isSequence(elementwisePlan(gpu, { op: "add", n: 4 }))); // false
 * gpu.destroy();
 * ```
 */
export function isSequence(timed: Timed): timed is KernelSequence {
  return "steps" in timed;
}

/**
 * The variant a timed unit reports: a plan's kernel variant, or a sequence's steps' joined.
 *
 * @param timed a plan or a sequence
 * @returns e.g. `kernel.nvidia` or `decode+combine`
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { variantOf } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * console.log(variantOf(elementwisePlan(gpu, { op: "add", n: 4 }))); // e.g. "kernel"
 * gpu.destroy();
 * ```
 */
export function variantOf(timed: Timed): string {
  return isSequence(timed) ? timed.variant : timed.kernel.variant;
}

/** Every tensor one set holds: a plan's bindings, or a sequence's bindings and intermediates. */
function tensorSpecs(timed: Timed): readonly BindingSpec[] {
  return isSequence(timed) ? [...timed.bindings, ...timed.intermediates] : timed.bindings;
}

/**
 * Bytes one set of a plan's bindings (a sequence's, with its intermediates) occupies.
 *
 * @param plan the dispatch or sequence
 * @returns the sum of the tensors' sizes (4 bytes per element)
 */
export function workingSetBytes(plan: Timed): number {
  return tensorSpecs(plan).reduce((sum, b) => sum + 4 * b.length, 0);
}

/**
 * How many input sets to rotate over: one when the working set already exceeds the cache;
 * otherwise enough that consecutive uses of a set are separated by twice the cache, at least two,
 * and within `maxSets`, `maxRotationBytes` and the number of passes.
 *
 * @param bytes bytes of one set
 * @param passes passes that will run (warm-up and timed)
 * @param options cache size and caps
 * @returns the number of sets
 * @throws Error naming `bytes` or `passes` when it is NaN, fractional or out of range
 */
export function rotationSets(bytes: number, passes: number, options?: TimingOptions): number {
  requireSize("rotationSets", "bytes", bytes, 0);
  requireSize("rotationSets", "passes", passes, 1);
  options ??= {};
  const cache = options.cacheBytes ?? 50 * 2 ** 20;
  if (bytes >= cache) return 1;
  const wanted = Math.ceil((2 * cache) / Math.max(bytes, 1));
  const byMemory = Math.floor((options.maxRotationBytes ?? 2 ** 30) / Math.max(bytes, 1));
  return Math.max(2, Math.min(wanted, options.maxSets ?? 64, byMemory, passes));
}

/** The keys {@link TimingOptions} may carry (a probe's options add `size` and `bandwidthBytes`). */
const TIMING_KEYS = ["samples", "warmup", "cacheBytes", "maxSets", "maxRotationBytes", "clockWarmupMs"];

/** A value as a timing message shows it: a string quoted, so that "5" does not read as 5. */
function given(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/**
 * Refuses options that are not an object or carry a key none of `allowed` (a misspelt `sampels` would
 * otherwise time with the default).
 */
function checkOptionKeys(where: string, options: unknown, allowed: readonly string[]): void {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new Error(`${where}: options must be an object, got ${given(options)}`);
  }
  const unknown = Object.keys(options).filter((k) =>
    !allowed.includes(k) && (options as Record<string, unknown>)[k] !== undefined
  );
  if (unknown.length > 0) {
    throw new Error(
      `${where}: unknown option ${unknown.map((k) => `"${k}"`).join(", ")} (expected ${allowed.join(", ")})`,
    );
  }
}

function validated(
  options: TimingOptions,
  allowed: readonly string[] = TIMING_KEYS,
): { samples: number; warmup: number } {
  checkOptionKeys("timing", options, allowed);
  const samples = options.samples ?? 10;
  const warmup = options.warmup ?? 3;
  if (!Number.isInteger(samples) || samples < 5 || samples > MAX_TIMED_PASSES) {
    throw new Error(`timing: samples must be an integer in [5, ${MAX_TIMED_PASSES}], got ${given(samples)}`);
  }
  if (!Number.isInteger(warmup) || warmup < 0) {
    throw new Error(`timing: warmup must be a non-negative integer, got ${given(warmup)}`);
  }
  return { samples, warmup };
}

/** Requires a plan or a kernel sequence (what {@link timePlan} and {@link timeResident} time). */
function checkTimed(where: string, plan: unknown): void {
  const p = plan as Partial<KernelPlan> | null;
  if (p === null || typeof p !== "object" || typeof p.op !== "string" || !Array.isArray(p.bindings)) {
    throw new Error(`${where}: plan must be a KernelPlan or KernelSequence (an op's plan), got ${given(plan)}`);
  }
}

/** Requires a function argument. */
function checkFunction(where: string, name: string, value: unknown): void {
  if (typeof value !== "function") throw new Error(`${where}: ${name} must be a function, got ${given(value)}`);
}

/**
 * Times a plan on tensors the caller already holds, rotating over `sets` in pass order. A
 * {@link KernelSequence} is timed as it runs: its dispatches in one pass, between one pair of
 * timestamps.
 *
 * @param gpu the device (must have `timestamp-query`)
 * @param plan the dispatch or sequence
 * @param sets one or more tensor lists, each one tensor per binding of the plan (and then per
 *   intermediate of a sequence)
 * @param options samples, warm-up, cache size (used only to report `cacheResident`)
 * @returns the timing
 * @throws TimestampUnavailableError without `timestamp-query` or when the timestamps read zero
 * @throws Error naming the op when WebGPU rejects the work, or when a timestamp runs backwards
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { timeResident } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const n = 4096;
 * const a = gpu.upload(new Float32Array(n).fill(1));
 * const b = gpu.upload(new Float32Array(n).fill(2));
 * const sum = gpu.alloc("f32", n);
 * const t = await timeResident(gpu, elementwisePlan(gpu, { op: "add", n }), [[a, b, sum]], {
 *   samples: 5,
 *   clockWarmupMs: 0,
 * });
 * console.log(`${t.ms} ms median of ${t.samples}`);
 * gpu.destroy();
 * ```
 */
export async function timeResident(
  gpu: ResidentDevice,
  plan: Timed,
  sets: readonly (readonly GpuTensor[])[],
  options?: TimingOptions,
): Promise<Timing> {
  requireDevice("timeResident", gpu);
  options ??= {};
  checkTimed("timeResident", plan);
  if (!Array.isArray(sets)) throw new Error(`${plan.op}: sets must be an array of tensor lists, got ${given(sets)}`);
  if (sets.length === 0) throw new Error(`${plan.op}: timing needs at least one tensor set`);
  const { samples, warmup } = validated(options);
  const encode = (encoder: GPUCommandEncoder, set: readonly GpuTensor[], writes?: GPUComputePassTimestampWrites) =>
    isSequence(plan) ? gpu.encodeSequence(encoder, plan, set, writes) : gpu.encode(encoder, plan, set, writes);
  const passes = await timePasses(gpu, `${plan.op}/${variantOf(plan)}`, samples, warmup, options, {
    // Warm-up submission: compiles the pipelines, validates, and raises clocks.
    async warm() {
      if (isSequence(plan)) {
        for (let j = 0; j < Math.max(1, warmup); j++) await gpu.submitSequence(plan, sets[j % sets.length]);
      } else {
        await gpu.submit(
          ...Array.from({ length: Math.max(1, warmup) }, (_, j): [KernelPlan, readonly GpuTensor[]] => [
            plan,
            sets[j % sets.length],
          ]),
        );
      }
    },
    encode: (encoder, j, writes) => encode(encoder, sets[j % sets.length], writes),
  });
  const bytes = workingSetBytes(plan);
  return {
    ...passes,
    samples,
    warmup,
    sets: sets.length,
    workingSetBytes: bytes,
    cacheResident: bytes * sets.length < (options.cacheBytes ?? 50 * 2 ** 20),
  };
}

/**
 * Times a {@link Program} as it runs: each sample is the program encoded once, from the start of its
 * first compute pass to the end of its last (a program clears `zeroed` bindings between passes),
 * after a warm-up run and {@link warmClocks}; median of `samples`.
 *
 * @param gpu the device (must have `timestamp-query`)
 * @param program the program (its tensors are read and written as any run does)
 * @param options samples, warm-up and clock warm-up (`cacheBytes` and rotation do not apply)
 * @returns the timing (`sets` 1, `workingSetBytes` the program's cost in bytes)
 * @throws TimestampUnavailableError without `timestamp-query`
 * @throws Error naming the program when WebGPU rejects the work
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { timeProgram } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const n = 4096;
 * const [a, b, sum] = [gpu.upload(new Float32Array(n).fill(1)), gpu.upload(new Float32Array(n).fill(2)), gpu.alloc("f32", n)];
 * const program = gpu.program("add", [[elementwisePlan(gpu, { op: "add", n }), [a, b, sum]]]);
 * const t = await timeProgram(gpu, program, { samples: 5, clockWarmupMs: 0 });
 * console.log(`${t.ms} ms median of ${t.samples}`);
 * program.destroy();
 * gpu.destroy();
 * ```
 */
export async function timeProgram(gpu: ResidentDevice, program: Program, options: TimingOptions = {}): Promise<Timing> {
  requireDevice("timeProgram", gpu);
  if (typeof (program as Partial<Program> | null)?.run !== "function") {
    throw new Error(`timeProgram: program must be a Program (gpu.program()), got ${given(program)}`);
  }
  const { samples, warmup } = validated(options);
  const passes = await timePasses(gpu, `program "${program.name}"`, samples, warmup, options, {
    async warm() {
      for (let j = 0; j < Math.max(1, warmup); j++) await program.run();
    },
    encode(encoder, _j, writes) {
      program.encode(encoder, writes);
      return [];
    },
  });
  return { ...passes, samples, warmup, sets: 1, workingSetBytes: program.cost.bytes, cacheResident: false };
}

/**
 * Records `passes` compute passes, each with a timestamp at its start and its end, in one command
 * buffer, submits it and reads the timestamps back: the timing core of a caller that wants every
 * pass's ticks (a profile, a trace of steps). Encoding, submission and the start of the readback run
 * inside the device's error scopes, with no await, so an error in them lands on this call.
 *
 * @param gpu the device (must have `timestamp-query`)
 * @param what what is timed, for messages
 * @param passes how many passes `record` makes, 1 to {@link MAX_TIMED_PASSES}
 * @param record encodes pass i with the timestamp writes `writes(i)` gives
 * @returns `ticks`, raw: pass i's start at `2i`, its end at `2i + 1`; `wallMs`, the host's milliseconds from
 *   the submission to the readback's mapping (no timed pass can take longer)
 * @throws TimestampUnavailableError without `timestamp-query`
 * @throws Error naming `passes` outside its range, or naming `what` when WebGPU rejects the work
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { timestampPasses } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const n = 4096;
 * const [a, b, sum] = [gpu.upload(new Float32Array(n).fill(1)), gpu.upload(new Float32Array(n).fill(2)), gpu.alloc("f32", n)];
 * const program = gpu.program("add", [[elementwisePlan(gpu, { op: "add", n }), [a, b, sum]]]);
 * const { ticks } = await timestampPasses(gpu, "two adds", 2, (encoder, writes) => {
 *   program.encode(encoder, writes(0));
 *   program.encode(encoder, writes(1));
 * });
 * console.log(`second add: ${ticks[3] - ticks[2]} ns`);
 * program.destroy();
 * gpu.destroy();
 * ```
 */
export async function timestampPasses(
  gpu: ResidentDevice,
  what: string,
  passes: number,
  record: (encoder: GPUCommandEncoder, writes: (i: number) => GPUComputePassTimestampWrites) => void,
): Promise<{ ticks: BigUint64Array; wallMs: number }> {
  requireDevice("timestampPasses", gpu);
  if (!Number.isInteger(passes) || passes < 1 || passes > MAX_TIMED_PASSES) {
    throw new Error(`timestampPasses: passes must be an integer from 1 to ${MAX_TIMED_PASSES}, got ${given(passes)}`);
  }
  checkFunction("timestampPasses", "record", record);
  if (!supportsTimestamps(gpu)) throw new TimestampUnavailableError("the device has no timestamp-query feature");
  const device = gpu.device;
  const count = 2 * passes;
  const querySet = device.createQuerySet({ type: "timestamp", count });
  const resolve = device.createBuffer({
    size: 8 * count,
    usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
  });
  const staging = device.createBuffer({ size: 8 * count, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    let mapped: Promise<void> | undefined;
    let t0 = 0;
    await gpu.withErrorScopes(() => what, () => {
      const encoder = device.createCommandEncoder({ label: what });
      record(encoder, (i) => ({ querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 }));
      encoder.resolveQuerySet(querySet, 0, count, resolve, 0);
      encoder.copyBufferToBuffer(resolve, 0, staging, 0, 8 * count);
      t0 = performance.now();
      device.queue.submit([encoder.finish()]);
      mapped = staging.mapAsync(GPUMapMode.READ);
      mapped.catch(() => {}); // a rejected submission is reported by the scopes
    });
    await mapped;
    const wallMs = performance.now() - t0;
    const ticks = new BigUint64Array(staging.getMappedRange().slice(0));
    staging.unmap();
    return { ticks, wallMs };
  } finally {
    querySet.destroy();
    resolve.destroy();
    staging.destroy();
  }
}

/**
 * Each bound dispatch's GPU time, once: every dispatch in a compute pass of its own between a pair of
 * timestamps ({@link timestampPasses}, in submissions of up to {@link MAX_TIMED_PASSES}). The sample
 * under {@link profileProgram}'s medians, for a caller that must run its dispatches exactly once (a
 * decode step whose state the run advances).
 *
 * @param gpu the device (must have `timestamp-query`)
 * @param what what is timed, for messages
 * @param steps the dispatches, bound (a program's `steps`)
 * @returns nanoseconds per dispatch, in order
 * @throws TimestampUnavailableError without `timestamp-query`
 * @throws Error naming `what` and the dispatch when a timestamp runs backwards, or as {@link timestampPasses}
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { dispatchTimes } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const n = 4096;
 * const [a, b, sum] = [gpu.upload(new Float32Array(n)), gpu.upload(new Float32Array(n)), gpu.alloc("f32", n)];
 * const program = gpu.program("add", [[elementwisePlan(gpu, { op: "add", n }), [a, b, sum]]]);
 * const [ns] = await dispatchTimes(gpu, "one add", program.steps);
 * program.destroy();
 * gpu.destroy();
 * ```
 */
export async function dispatchTimes(
  gpu: ResidentDevice,
  what: string,
  steps: readonly BoundDispatch[],
): Promise<bigint[]> {
  const ns: bigint[] = [];
  for (let first = 0; first < steps.length; first += MAX_TIMED_PASSES) {
    const group = steps.slice(first, first + MAX_TIMED_PASSES);
    const { ticks } = await timestampPasses(gpu, what, group.length, (encoder, writes) => {
      group.forEach((step, i) => encodeBound(encoder, [step], writes(i)));
    });
    group.forEach((_, i) => {
      const begin = ticks[2 * i], end = ticks[2 * i + 1];
      if (end < begin) throw new Error(`${what}: timestamp ran backwards in dispatch ${first + i}`);
      ns.push(end - begin);
    });
  }
  return ns;
}

/** One dispatch of a program as {@link profileProgram} timed it. */
export interface DispatchTime {
  /** Its index in the program. */
  index: number;
  /** The plan's op, e.g. `matmul`. */
  op: string;
  /** The resolved kernel variant, e.g. `linear_fused`. */
  variant: string;
  /** Its workgroup counts. */
  workgroups: readonly [number, number, number];
  /** GPU milliseconds, the median of the samples. */
  ms: number;
  /** The FLOPs the plan says it does at least. */
  flops: number;
  /** The bytes the plan says it moves at least. */
  bytes: number;
}

/** Dispatches of one kernel summed (see {@link profileByKernel}). */
export interface KernelTime {
  /** `op/variant`. */
  kernel: string;
  /** How many dispatches of the program ran it. */
  dispatches: number;
  /** Their milliseconds, summed. */
  ms: number;
  /** Their FLOPs, summed. */
  flops: number;
  /** Their bytes, summed. */
  bytes: number;
}

/**
 * Where a program's GPU time goes: every dispatch in a compute pass of its own, between a pair of
 * timestamps ({@link timestampPasses}, up to {@link MAX_TIMED_PASSES} dispatches a submission), `samples`
 * times (the median per dispatch). The passes add their own launch and drop
 * the program's one-pass barriers, so the sum differs from {@link timeProgram}'s figure (it is
 * usually a little larger); it says which kernels take the time, not what the program takes.
 *
 * @param gpu the device (must have `timestamp-query`)
 * @param program the program (its inputs as the caller left them)
 * @param options `samples` (default 3, at least 1) and `clockWarmupMs`
 * @returns one entry per dispatch, in program order
 * @throws TimestampUnavailableError without `timestamp-query`
 * @throws Error naming the program when WebGPU rejects the work
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { profileByKernel, profileProgram } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const n = 4096;
 * const [a, b, sum] = [gpu.upload(new Float32Array(n).fill(1)), gpu.upload(new Float32Array(n).fill(2)), gpu.alloc("f32", n)];
 * const program = gpu.program("add twice", [
 *   [elementwisePlan(gpu, { op: "add", n }), [a, b, sum]],
 *   [elementwisePlan(gpu, { op: "add", n }), [sum, b, a]],
 * ]);
 * const times = await profileProgram(gpu, program, { samples: 1, clockWarmupMs: 0 });
 * console.log(profileByKernel(times)); // [{ kernel: "elementwise/kernel", dispatches: 2, ms: ..., ... }]
 * program.destroy();
 * gpu.destroy();
 * ```
 */
export async function profileProgram(
  gpu: ResidentDevice,
  program: Program,
  options: { samples?: number; clockWarmupMs?: number } = {},
): Promise<DispatchTime[]> {
  requireDevice("profileProgram", gpu);
  if (typeof (program as Partial<Program> | null)?.run !== "function") {
    throw new Error(`profileProgram: program must be a Program (gpu.program()), got ${given(program)}`);
  }
  const samples = options.samples ?? 3;
  if (!Number.isInteger(samples) || samples < 1) {
    throw new Error(`profileProgram: samples must be an integer >= 1, got ${given(samples)}`);
  }
  if (!supportsTimestamps(gpu)) throw new TimestampUnavailableError("the device has no timestamp-query feature");
  const steps = program.steps;
  await program.run(); // compiled and warm
  await warmClocks(gpu, { ms: options.clockWarmupMs ?? CLOCK_WARMUP_MS });
  const ns: bigint[][] = steps.map(() => []);
  for (let s = 0; s < samples; s++) {
    (await dispatchTimes(gpu, `profile of program "${program.name}"`, steps)).forEach((t, i) => ns[i].push(t));
  }
  return steps.map((step, index) => ({
    index,
    op: step.plan.op,
    variant: step.plan.kernel.variant,
    workgroups: step.workgroups,
    ms: summarizeNs(ns[index]).ms,
    flops: step.plan.cost.flops,
    bytes: step.plan.cost.bytes,
  }));
}

/**
 * A profile's dispatches summed by kernel (`op/variant`), the most time first.
 *
 * @param times {@link profileProgram}'s entries
 * @returns one entry per kernel
 *
 * @example
 * ```ts
 * import { profileByKernel } from "@xpu/ops/harness/bench";
 * const entry = { workgroups: [1, 1, 1] as const, flops: 0, bytes: 8 };
 * const sums = profileByKernel([
 *   { ...entry, index: 0, op: "softmax", variant: "kernel", ms: 0.5 },
 *   { ...entry, index: 1, op: "matmul", variant: "kernel", ms: 2 },
 *   { ...entry, index: 2, op: "softmax", variant: "kernel", ms: 0.25 },
 * ]);
 * console.log(sums.map((k) => `${k.kernel} ${k.ms}`)); // ["matmul/kernel 2", "softmax/kernel 0.75"]
 * ```
 */
export function profileByKernel(times: readonly DispatchTime[]): KernelTime[] {
  const sums = new Map<string, KernelTime>();
  for (const t of times) {
    const kernel = `${t.op}/${t.variant}`;
    const k = sums.get(kernel) ?? { kernel, dispatches: 0, ms: 0, flops: 0, bytes: 0 };
    k.dispatches++;
    k.ms += t.ms;
    k.flops += t.flops;
    k.bytes += t.bytes;
    sums.set(kernel, k);
  }
  return [...sums.values()].sort((a, b) => b.ms - a.ms);
}

/**
 * Times any encoding: `encode` records whatever work it likes into the encoder (several programs,
 * buffer copies, passes of its own), and each sample is timed between an empty compute pass before it
 * and one after it (their timestamps land when the work before them has finished), after a warm-up
 * submission and {@link warmClocks}; median of `samples`. For one program, {@link timeProgram} times
 * its own passes instead.
 *
 * @param gpu the device (must have `timestamp-query`)
 * @param what what is timed, for messages
 * @param encode records one sample's work
 * @param options samples, warm-up and clock warm-up (`cacheBytes` and rotation do not apply)
 * @returns the timing (`sets` 1, `workingSetBytes` 0: the caller knows what the work moves)
 * @throws TimestampUnavailableError without `timestamp-query`
 * @throws Error naming `what` when WebGPU rejects the work
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { timeEncoding } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const n = 4096;
 * const [a, b, sum] = [gpu.upload(new Float32Array(n).fill(1)), gpu.upload(new Float32Array(n).fill(2)), gpu.alloc("f32", n)];
 * const program = gpu.program("add", [[elementwisePlan(gpu, { op: "add", n }), [a, b, sum]]]);
 * const copy = gpu.alloc("f32", n);
 * const t = await timeEncoding(gpu, "add, then a copy", (encoder) => {
 *   program.encode(encoder);
 *   encoder.copyBufferToBuffer(sum.buffer, 0, copy.buffer, 0, 4 * n);
 * }, { samples: 5, clockWarmupMs: 0 });
 * console.log(`${t.ms} ms median of ${t.samples}`);
 * program.destroy();
 * gpu.destroy();
 * ```
 */
export async function timeEncoding(
  gpu: ResidentDevice,
  what: string,
  encode: (encoder: GPUCommandEncoder) => void,
  options?: TimingOptions,
): Promise<Timing> {
  requireDevice("timeEncoding", gpu);
  options ??= {};
  if (typeof what !== "string") throw new Error(`timeEncoding: what must be a string, got ${given(what)}`);
  checkFunction("timeEncoding", "encode", encode);
  const { samples, warmup } = validated(options);
  const passes = await timePasses(gpu, what, samples, warmup, options, {
    async warm() {
      await gpu.withErrorScopes(() => `warm-up of ${what}`, () => {
        const encoder = gpu.device.createCommandEncoder({ label: `warm ${what}` });
        for (let j = 0; j < Math.max(1, warmup); j++) encode(encoder);
        gpu.device.queue.submit([encoder.finish()]);
      });
    },
    encode(encoder, _j, writes) {
      if (writes?.beginningOfPassWriteIndex !== undefined) {
        const { querySet, beginningOfPassWriteIndex } = writes;
        encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex } }).end();
      }
      encode(encoder);
      if (writes?.endOfPassWriteIndex !== undefined) {
        const { querySet, endOfPassWriteIndex } = writes;
        encoder.beginComputePass({ timestampWrites: { querySet, endOfPassWriteIndex } }).end();
      }
      return [];
    },
  });
  return { ...passes, samples, warmup, sets: 1, workingSetBytes: 0, cacheResident: false };
}

/**
 * The timing core: a warm-up submission, the clock warm-up, then `warmup` untimed and `samples`
 * timed encodings in one command buffer, each timed encoding between one pair of timestamps; the
 * ticks are checked (never backwards, never all zero, never summing past the submission's wall
 * time) and summarised.
 */
async function timePasses(
  gpu: ResidentDevice,
  where: string,
  samples: number,
  warmup: number,
  options: TimingOptions,
  work: {
    warm(): Promise<void>;
    encode(encoder: GPUCommandEncoder, j: number, writes?: GPUComputePassTimestampWrites): GPUBuffer[];
  },
): Promise<SampleStats & { samplesMs: number[]; wallMs: number; clockWarmupMs: number }> {
  if (!supportsTimestamps(gpu)) throw new TimestampUnavailableError("the device has no timestamp-query feature");
  const device = gpu.device;
  await work.warm();
  await device.queue.onSubmittedWorkDone();
  // After the compile (which may take long enough for the clocks to fall), right before the figure.
  const clockWarmupMs = await warmClocks(gpu, { ms: options.clockWarmupMs ?? CLOCK_WARMUP_MS });

  const transient: GPUBuffer[] = [];
  let wallMs: number;
  let ticks: BigUint64Array;
  try {
    ({ ticks, wallMs } = await timestampPasses(gpu, `timing of ${where}`, samples, (encoder, writes) => {
      for (let j = 0; j < warmup; j++) transient.push(...work.encode(encoder, j));
      for (let j = 0; j < samples; j++) transient.push(...work.encode(encoder, warmup + j, writes(j)));
    }));
  } finally {
    for (const b of transient) b.destroy();
  }

  const ns: bigint[] = [];
  for (let j = 0; j < samples; j++) {
    const begin = ticks[2 * j], end = ticks[2 * j + 1];
    if (end < begin) throw new Error(`${where}: timestamp ran backwards in pass ${j} (${begin} -> ${end})`);
    ns.push(end - begin);
  }
  if (ns.every((d) => d === 0n)) {
    throw new TimestampUnavailableError(`every timestamp pair of ${where} read back equal (no ticks recorded)`);
  }
  // Every timed pass ran inside the submission, so their sum cannot exceed its wall time; if it
  // does, the ticks are not nanoseconds and no figure taken from them is true.
  const gpuSumMs = ns.reduce((sum, d) => sum + Number(d), 0) / 1e6;
  if (gpuSumMs > wallMs * 1.01 + 0.01) {
    throw new TimestampUnavailableError(
      `${where}: the timed passes sum to ${gpuSumMs.toFixed(3)} ms but the submission took ${wallMs.toFixed(3)} ms ` +
        `of wall time (the timestamps are not in nanoseconds)`,
    );
  }
  const stats = summarizeNs(ns);
  if (stats.ms === 0) throw new Error(`${where}: the median pass is below the timestamp resolution`);
  return { ...stats, samplesMs: ns.map((d) => Number(d) / 1e6), wallMs, clockWarmupMs };
}

/**
 * Times a plan: allocates {@link rotationSets} sets of tensors (inputs from `makeInputs`, outputs
 * and a sequence's intermediates zero-filled), times it with {@link timeResident}, and frees every
 * tensor it made.
 *
 * @param gpu the device (must have `timestamp-query`)
 * @param plan the dispatch or sequence
 * @param makeInputs one host array per `input`/`inout` binding, in binding order, for set `set`
 *   (random values, never all zeros; a different seed per set)
 * @param options samples, warm-up, cache size and rotation caps
 * @returns the timing
 * @throws TimestampUnavailableError without `timestamp-query`
 * @throws Error when an input does not match its binding or WebGPU rejects the work
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { timePlan } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const n = 4096;
 * const rand = () => Float32Array.from({ length: n }, () => Math.random() + 0.5);
 * const t = await timePlan(gpu, elementwisePlan(gpu, { op: "add", n }), () => [rand(), rand()], {
 *   samples: 5,
 *   maxSets: 2,
 *   clockWarmupMs: 0,
 * });
 * console.log(`${t.ms} ms median of ${t.samples}`);
 * gpu.destroy();
 * ```
 */
export async function timePlan(
  gpu: ResidentDevice,
  plan: Timed,
  makeInputs: (set: number) => readonly HostArray[],
  options?: TimingOptions,
): Promise<Timing> {
  requireDevice("timePlan", gpu);
  options ??= {};
  checkTimed("timePlan", plan);
  checkFunction("timePlan", "makeInputs", makeInputs);
  if (!supportsTimestamps(gpu)) throw new TimestampUnavailableError("the device has no timestamp-query feature");
  const { samples, warmup } = validated(options);
  const count = rotationSets(workingSetBytes(plan), Math.max(1, warmup) + samples, options);
  const sets: GpuTensor[][] = [];
  try {
    for (let s = 0; s < count; s++) {
      const inputs = makeInputs(s);
      const fed = plan.bindings.filter((b) => b.role !== "output");
      if (inputs.length !== fed.length) {
        throw new Error(`${plan.op}: expected ${fed.length} input arrays (${fed.map((b) => b.name).join(", ")})`);
      }
      const tensors: GpuTensor[] = [];
      sets.push(tensors);
      let next = 0;
      for (const spec of tensorSpecs(plan)) {
        if (spec.role === "output" || !plan.bindings.includes(spec)) {
          tensors.push(gpu.alloc(spec.dtype, spec.length, spec.name));
          continue;
        }
        const data = inputs[next++];
        if (data.length !== spec.length) {
          throw new Error(`${plan.op}: ${spec.name} must have ${spec.length} elements, got ${data.length}`);
        }
        tensors.push(gpu.upload(data, spec.name));
      }
    }
    return await timeResident(gpu, plan, sets, options);
  } finally {
    for (const set of sets) for (const t of set) t.buffer.destroy();
  }
}
