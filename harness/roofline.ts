/**
 * Roofline probes: the device's own ceilings, measured on the device in the same session.
 *
 * WebGPU exposes no clock, no core count and no bus width, so no peak can be computed; it is
 * measured instead, and every op's figure is then a fraction of it.
 *
 * - **Bandwidth** ({@link probeBandwidth}): vec4 streaming kernels, copy (bytes read + written),
 *   read-only (loads summed into a store that never fires, so no load can be dropped) and
 *   write-only, over buffers far larger than any cache (1 GiB, within maxStorageBufferBindingSize
 *   and maxBufferSize; 256 MiB for a quick run; 32 MiB on a fallback adapter). The best of them is
 *   the bandwidth roofline. The source buffer holds a non-zero pattern written on the GPU.
 * - **Compute** ({@link probeFma}): independent vec4 `fma` chains in registers, operands from a
 *   uniform and chain starts from the thread id, an iteration count from the uniform (calibrated
 *   so a pass lasts a few milliseconds), and a result stored only under a condition that depends on
 *   every chain. One vec4 `fma` counts 8 FLOPs. The chain count and unroll are configurable and
 *   {@link sweepConfigs} lists a grid to try; the best is the compute roofline.
 * - **f16** (same kernel in `vec4<f16>`) only when the device's f16 known-answer check passed.
 * - **DP4a** ({@link probeDp4a}): `dot4I8Packed` chains. Convention: one call counts **8 ops**, its
 *   4 multiplies and 4 adds (3 to sum the products, 1 to accumulate); reported in TOPS.
 *
 * Every kernel first runs a known-answer check on a small size ({@link checkBandwidthKernel},
 * {@link checkFmaKernel}, {@link checkDp4aKernel}): a kernel that computes nothing, or fewer FMAs
 * than it is credited with, fails there and reports no figure. Times come from `harness/timing.ts`
 * (timestamp queries, median of at least 5 after warm-up).
 *
 * Run the probes alone with `deno task roofline`, and every configuration with `deno task roofline --sweep`
 * (see {@link sweepConfigs}).
 *
 * @module
 */

import { type GpuTensor, type KernelPlan, requireDevice, type ResidentDevice } from "./device.ts";
import { bindingBytes, foldWorkgroups } from "./limits.ts";
import { packParams } from "./params.ts";
import {
  BANDWIDTH_PARAMS,
  type BandwidthConfig,
  type BandwidthKind,
  bandwidthName,
  bandwidthSource,
  dot4I8PackedAdd,
  DP4A_PARAMS,
  type Dp4aConfig,
  dp4aName,
  dp4aSource,
  FMA_PARAMS,
  type FmaConfig,
  fmaName,
  fmaSource,
} from "./roofline.wgsl.ts";
import { timeResident, TimestampUnavailableError, type TimingOptions } from "./timing.ts";

export type { BandwidthConfig, BandwidthKind, Dp4aConfig, FmaConfig } from "./roofline.wgsl.ts";
// Re-exported because ProbeOptions extends it.
export type { TimingOptions } from "./timing.ts";

/** What a probe figure was measured on. */
export interface ProbeAdapter {
  /** The adapter's description (the driver's name for the device). */
  description: string;
  /** The adapter's vendor string (may be a PCI id in decimal). */
  vendor: string;
  /** The adapter's architecture string (often empty). */
  architecture: string;
  /** A driver string, when the runtime exposes one (Deno 2.9.6 does not: null). */
  driver: string | null;
  /** Whether it is a fallback (software) adapter. */
  isFallbackAdapter: boolean;
}

/** Which ceiling a probe measures. */
export type ProbeName = "bandwidth" | "compute" | "computeF16" | "dp4a";

/** One probe kernel's measured figure and the conditions it was taken under. */
export interface ProbeResult {
  /** The ceiling measured. */
  probe: ProbeName;
  /** The kernel config's name, e.g. `fma.f32.c8.u16.wg256`. */
  kernel: string;
  /** The figure, in `unit`. */
  figure: number;
  /** GB/s for bandwidth, TFLOP/s for compute and computeF16, TOPS for dp4a. */
  unit: "GB/s" | "TFLOP/s" | "TOPS";
  /** Median pass time, ms. */
  ms: number;
  /** Fastest pass, ms. */
  msMin: number;
  /** Slowest pass, ms. */
  msMax: number;
  /** Timed passes. */
  samples: number;
  /** Bytes one pass moves. */
  bytes: number;
  /** FLOPs (or, for dp4a, integer ops) one pass does. */
  ops: number;
  /** The device. */
  adapter: ProbeAdapter;
  /** Runtime and version, e.g. `deno 2.9.6`. */
  runtime: string;
  /** ISO date and time of the measurement. */
  date: string;
}

/** The device's ceilings and every probe behind them. */
export interface Roofline {
  /** The device. */
  adapter: ProbeAdapter;
  /** Runtime and version. */
  runtime: string;
  /** ISO date and time. */
  date: string;
  /** Best bandwidth probe, GB/s. */
  bandwidthGBps: number;
  /** Best f32 FMA probe, TFLOP/s. */
  computeTFLOPs: number;
  /** Best f16 FMA probe, TFLOP/s, or null when f16 is not verified on the device. */
  computeF16TFLOPs: number | null;
  /** Best DP4a probe, TOPS (8 ops per call), or null when the language feature is missing. */
  dp4aTOPS: number | null;
  /** Every probe measured. */
  probes: ProbeResult[];
  /** Probes not run, with the reason. */
  skipped: string[];
}

/** How large the probes are: full (a real GPU) or small (a fallback adapter, or a quick run). */
export type ProbeSize = "full" | "small";

/** Requires a probe size: "full" or "small" (anything else would silently take the full probes). */
function requireProbeSize(where: string, size: unknown): void {
  if (size !== "full" && size !== "small") {
    throw new Error(
      `${where}: size must be "full" or "small", got ${typeof size === "string" ? JSON.stringify(size) : String(size)}`,
    );
  }
}

/** The timing options among a probe's (which add the probe size, bytes and a result callback). */
function timingOptions(options: TimingOptions): TimingOptions {
  const { samples, warmup, cacheBytes, maxSets, maxRotationBytes, clockWarmupMs } = options ?? {};
  return { samples, warmup, cacheBytes, maxSets, maxRotationBytes, clockWarmupMs };
}

/** Options of the probes. */
export interface ProbeOptions extends TimingOptions {
  /** Full or small sizes. Default: small on a fallback adapter, full otherwise. */
  size?: ProbeSize;
  /**
   * Bytes of each bandwidth buffer (clamped to the device's limits). Default 1 GiB (full), 256 MiB
   * (small on a real GPU: still five times an H200's L2), 32 MiB on a fallback adapter.
   */
  bandwidthBytes?: number;
  /**
   * Threads of a compute probe (rounded up to whole workgroups). Default 2^23 (enough to fill a
   * large GPU many times over, so the tail of the grid is a small part), 2^12 on a fallback adapter.
   */
  threads?: number;
  /** Pass time the compute probes' iteration count is calibrated to, ms. Default 5 (full), 2 (small), 20 (fallback). */
  targetMs?: number;
  /** Called with each probe result as it is measured. */
  onResult?: (result: ProbeResult) => void;
}

const F32_MAX_BELOW = 3.0e38; // a threshold no probe's sum reaches: the store never fires

/**
 * What the device says about itself, for stamping figures.
 *
 * @param gpu the device
 * @returns description, vendor, architecture, driver (or null) and whether it is a fallback
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { probeAdapter } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const { description, driver, isFallbackAdapter } = probeAdapter(gpu);
 * gpu.destroy();
 * ```
 */
export function probeAdapter(gpu: ResidentDevice): ProbeAdapter {
  requireDevice("probeAdapter", gpu);
  const info = gpu.device.adapterInfo as GPUAdapterInfo & { driver?: unknown };
  return {
    description: gpu.adapter.description,
    vendor: gpu.adapter.vendor,
    architecture: gpu.adapter.architecture,
    driver: typeof info?.driver === "string" && info.driver !== "" ? info.driver : null,
    isFallbackAdapter: gpu.adapter.isFallbackAdapter,
  };
}

/**
 * The runtime and its version: `deno <version>` under Deno, else the user agent.
 *
 * @returns e.g. `deno 2.9.6`
 *
 * @example
 * ```ts
 * import { runtimeVersion } from "@xpu/ops/harness/bench";
 * runtimeVersion(); // "deno 2.9.6" under Deno 2.9.6; the user agent in a browser
 * ```
 */
export function runtimeVersion(): string {
  const deno = (globalThis as { Deno?: { version?: { deno?: string } } }).Deno;
  return deno?.version?.deno ? `deno ${deno.version.deno}` : (globalThis.navigator?.userAgent ?? "unknown");
}

function sizeOf(gpu: ResidentDevice, options: ProbeOptions): ProbeSize {
  return options.size ?? (gpu.adapter.isFallbackAdapter ? "small" : "full");
}

function defaultBandwidthBytes(gpu: ResidentDevice, options: ProbeOptions): number {
  if (gpu.adapter.isFallbackAdapter) return 32 * 2 ** 20;
  return sizeOf(gpu, options) === "full" ? 2 ** 30 : 256 * 2 ** 20;
}

function plan(
  name: string,
  source: string,
  bindings: KernelPlan["bindings"],
  params: ArrayBuffer,
  workgroups: [number, number, number],
  cost: KernelPlan["cost"],
): KernelPlan {
  const kernel = { variant: name, source, rung: "override" as const, tried: [name] };
  return { op: "roofline", kernel, bindings, params, workgroups, cost };
}

/** The pipeline-cache name of a kernel: the config's, or, for a caller's source, one keyed by it. */
function named(name: string, source: string | undefined): string {
  if (source === undefined) return name;
  let h = 5381;
  for (let i = 0; i < source.length; i++) h = (Math.imul(h, 33) + source.charCodeAt(i)) >>> 0;
  return `${name}.custom${h.toString(16)}`;
}

// ---------------------------------------------------------------------------------------------
// Bandwidth

function bandwidthPlan(
  gpu: ResidentDevice,
  c: BandwidthConfig,
  n: number,
  outVec4: number,
  threshold: number,
  source?: string,
) {
  const groups = foldWorkgroups(
    Math.ceil(n / (c.workgroupSize * c.perThread)),
    gpu.limits.maxComputeWorkgroupsPerDimension,
  );
  const vec = (name: string, length: number, role: "input" | "output") => ({
    name,
    dtype: "f32" as const,
    length: 4 * length,
    role,
  });
  const bindings = c.kind === "copy"
    ? [vec("src", n, "input"), vec("dst", n, "output")]
    : c.kind === "read"
    ? [vec("src", n, "input"), vec("out", outVec4, "output")]
    : [vec("dst", n, "output")];
  const params = packParams(BANDWIDTH_PARAMS, { n, threshold, scale: 1, offset: 0.5 }, "roofline");
  const bytes = 16 * n * (c.kind === "copy" ? 2 : 1);
  return plan(named(bandwidthName(c), source), source ?? bandwidthSource(c), bindings, params, groups, {
    bytes,
    flops: 0,
  });
}

/** Fills a vec4 tensor with the write kernel's non-zero pattern, `f32(i) + 0.5 + lane / 4`. */
async function fillPattern(gpu: ResidentDevice, tensor: GpuTensor): Promise<void> {
  const c: BandwidthConfig = { kind: "write", perThread: 4, workgroupSize: 256 };
  await gpu.submit([bandwidthPlan(gpu, c, tensor.length / 4, 0, 0), [tensor]]);
}

/**
 * Known-answer check of a bandwidth kernel on a small, awkward size (not a multiple of the
 * workgroup span): copy must reproduce its input, read must store every thread's exact sum (inputs
 * are small integers), write must store its pattern exactly.
 *
 * @param gpu the device
 * @param c the config
 * @param source WGSL to check instead of the generated kernel (for testing the check itself)
 * @throws Error naming the kernel and the first wrong element
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { checkBandwidthKernel } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * await checkBandwidthKernel(gpu, { kind: "copy", perThread: 4, workgroupSize: 256 }); // resolves: the copy is exact
 * gpu.destroy();
 * ```
 */
export async function checkBandwidthKernel(gpu: ResidentDevice, c: BandwidthConfig, source?: string): Promise<void> {
  requireDevice("checkBandwidthKernel", gpu);
  const span = c.workgroupSize * c.perThread;
  const n = 3 * span + 5;
  const threads = 4 * c.workgroupSize;
  const p = bandwidthPlan(gpu, c, n, threads, -F32_MAX_BELOW, source);
  const src = Float32Array.from({ length: 4 * n }, (_, i) => ((i * 7919) % 13) - 6 || 7);
  let expected: Float32Array;
  if (c.kind === "copy") expected = src;
  else if (c.kind === "write") {
    expected = Float32Array.from({ length: 4 * n }, (_, i) => Math.floor(i / 4) + 0.5 + (i % 4) * 0.25);
  } else {
    expected = new Float32Array(4 * threads);
    for (let t = 0; t < threads; t++) {
      const block = Math.floor(t / c.workgroupSize), lid = t % c.workgroupSize;
      for (let k = 0; k < c.perThread; k++) {
        const i = block * span + lid + k * c.workgroupSize;
        if (i < n) { for (let l = 0; l < 4; l++) expected[4 * t + l] += src[4 * i + l]; }
      }
    }
  }
  const [got] = await gpu.run(p, c.kind === "write" ? [] : [src]);
  assertExact(got, expected, p.kernel.variant);
}

function assertExact(got: ArrayLike<number>, expected: ArrayLike<number>, where: string): void {
  if (got.length !== expected.length) throw new Error(`${where}: ${got.length} values, expected ${expected.length}`);
  for (let i = 0; i < got.length; i++) {
    if (got[i] !== expected[i]) {
      throw new Error(`${where}: known-answer check failed at element ${i}: got ${got[i]}, expected ${expected[i]}`);
    }
  }
}

function stamp(gpu: ResidentDevice) {
  return { adapter: probeAdapter(gpu), runtime: runtimeVersion(), date: new Date().toISOString() };
}

/**
 * Measures one bandwidth kernel: checks it, then times it on buffers of `bandwidthBytes`
 * (initialised on the GPU with a non-zero pattern). Bytes: copy counts the read and the write.
 *
 * @param gpu the device (with timestamp-query)
 * @param c the kernel config
 * @param options sizes and timing options
 * @returns the result, in GB/s
 * @throws Error when the known-answer check fails; TimestampUnavailableError without timestamps
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { probeBandwidth } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const r = await probeBandwidth(gpu, { kind: "copy", perThread: 4, workgroupSize: 256 }, {
 *   bandwidthBytes: 4 << 20, // small, for a quick look; the default is 1 GiB on a real GPU
 *   samples: 5,
 *   clockWarmupMs: 0,
 * });
 * console.log(`${r.kernel}: ${r.figure.toFixed(1)} GB/s`);
 * gpu.destroy();
 * ```
 */
export async function probeBandwidth(
  gpu: ResidentDevice,
  c: BandwidthConfig,
  options?: ProbeOptions,
): Promise<ProbeResult> {
  requireDevice("probeBandwidth", gpu);
  options ??= {};
  await checkBandwidthKernel(gpu, c);
  const limit = bindingBytes(gpu.limits);
  const wanted = options.bandwidthBytes ?? defaultBandwidthBytes(gpu, options);
  const n = Math.floor(Math.min(wanted, limit) / 16);
  const p = bandwidthPlan(gpu, c, n, 64, F32_MAX_BELOW);
  const tensors = p.bindings.map((b) => gpu.alloc(b.dtype, b.length, b.name));
  try {
    if (c.kind !== "write") await fillPattern(gpu, tensors[0]);
    const t = await timeResident(gpu, p, [tensors], timingOptions(options));
    return {
      probe: "bandwidth",
      kernel: p.kernel.variant,
      figure: p.cost.bytes / t.ms / 1e6,
      unit: "GB/s",
      ms: t.ms,
      msMin: t.msMin,
      msMax: t.msMax,
      samples: t.samples,
      bytes: p.cost.bytes,
      ops: 0,
      ...stamp(gpu),
    };
  } finally {
    for (const t of tensors) t.buffer.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Compute: FMA chains (f32, f16) and DP4a

/** Operands of the FMA chains: probe values keep chains near 1; check values keep them integral. */
interface ChainValues {
  a: number;
  b: number;
  threshold: number;
  tscale: number;
  step: number;
}

const PROBE_VALUES: ChainValues = { a: 0.999, b: 0.001, threshold: F32_MAX_BELOW, tscale: 1e-3, step: 1e-3 };

function fmaPlan(
  gpu: ResidentDevice,
  c: FmaConfig,
  threads: number,
  iters: number,
  outVec4: number,
  v: ChainValues,
  source?: string,
) {
  const groups = foldWorkgroups(Math.ceil(threads / c.workgroupSize), gpu.limits.maxComputeWorkgroupsPerDimension);
  const launched = groups[0] * groups[1] * c.workgroupSize;
  const params = packParams(
    FMA_PARAMS,
    { iters, ...v },
    "roofline",
  );
  const flops = launched * iters * c.unroll * c.chains * 8;
  const bindings = [{ name: "out", dtype: "f32" as const, length: 4 * outVec4, role: "output" as const }];
  return plan(named(fmaName(c), source), source ?? fmaSource(c), bindings, params, groups, { bytes: 0, flops });
}

/**
 * Known-answer check of an FMA kernel: with `a = 1, b = 1` every chain must end at its start plus
 * the number of FMAs it was credited with, and with `a = -1, b = 3` at the alternating value, so a
 * kernel that skips steps or computes `x * b + a` fails. All values are small integers: exact in
 * f32 and f16.
 *
 * @param gpu the device
 * @param c the config
 * @param source WGSL to check instead of the generated kernel (for testing the check itself)
 * @throws Error naming the kernel and the first wrong element
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { checkFmaKernel } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * await checkFmaKernel(gpu, { dtype: "f32", chains: 4, unroll: 4, workgroupSize: 64 }); // resolves: every chain ends where it should
 * gpu.destroy();
 * ```
 */
export async function checkFmaKernel(gpu: ResidentDevice, c: FmaConfig, source?: string): Promise<void> {
  requireDevice("checkFmaKernel", gpu);
  const threads = 2 * c.workgroupSize, iters = 2, steps = iters * c.unroll;
  for (const [a, b] of [[1, 1], [-1, 3]]) {
    const p = fmaPlan(gpu, c, threads, iters, threads, { a, b, threshold: -F32_MAX_BELOW, tscale: 1, step: 1 }, source);
    const expected = new Float32Array(4 * threads);
    for (let t = 0; t < threads; t++) {
      for (let k = 0; k < c.chains; k++) {
        for (let l = 0; l < 4; l++) {
          let x = (t & 7) + 4 * k + l;
          for (let s = 0; s < steps; s++) x = x * a + b;
          expected[4 * t + l] += x;
        }
      }
    }
    const [got] = await gpu.run(p, []);
    assertExact(got, expected, `${p.kernel.variant} (a=${a}, b=${b})`);
  }
}

function dp4aPlan(
  gpu: ResidentDevice,
  c: Dp4aConfig,
  threads: number,
  iters: number,
  out: number,
  check: boolean,
  source?: string,
) {
  const groups = foldWorkgroups(Math.ceil(threads / c.workgroupSize), gpu.limits.maxComputeWorkgroupsPerDimension);
  const launched = groups[0] * groups[1] * c.workgroupSize;
  const params = packParams(
    DP4A_PARAMS,
    check
      ? { iters, b: DP4A_B, tscale: 1, step: DP4A_STEP, mask: 0, want: 0 }
      : { iters, b: DP4A_B, tscale: 3, step: DP4A_STEP, mask: 0xffffffff, want: 0x7fffffff },
    "roofline",
  );
  const ops = launched * iters * c.unroll * c.chains * 8;
  const bindings = [{ name: "out", dtype: "i32" as const, length: out, role: "output" as const }];
  return plan(named(dp4aName(c), source), source ?? dp4aSource(c), bindings, params, groups, { bytes: 0, flops: ops });
}

const DP4A_B = 0x02ff7f81; // bytes 0x81 (-127), 0x7f (127), 0xff (-1), 0x02 (2): every sign
const DP4A_STEP = 0x01030507;

/**
 * Known-answer check of a DP4a kernel against a host emulation of `dot4I8Packed` with i32
 * wrap-around, every step of every chain included.
 *
 * @param gpu the device
 * @param c the config
 * @param source WGSL to check instead of the generated kernel (for testing the check itself)
 * @throws Error naming the kernel and the first wrong element
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { checkDp4aKernel, hasDp4a } from "@xpu/ops/harness/bench";
 * if (hasDp4a()) {
 *   const gpu = await acquireDevice();
 *   await checkDp4aKernel(gpu, { chains: 8, unroll: 4, workgroupSize: 64 }); // resolves: matches the host emulation
 *   gpu.destroy();
 * }
 * ```
 */
export async function checkDp4aKernel(gpu: ResidentDevice, c: Dp4aConfig, source?: string): Promise<void> {
  requireDevice("checkDp4aKernel", gpu);
  const threads = 2 * c.workgroupSize, iters = 2, steps = iters * c.unroll;
  const p = dp4aPlan(gpu, c, threads, iters, threads, true, source);
  const expected = new Int32Array(threads);
  for (let t = 0; t < threads; t++) {
    let sum = 0;
    for (let k = 0; k < c.chains; k++) {
      let x = ((t & 7) + Math.imul(k + 1, DP4A_STEP)) | 0;
      for (let s = 0; s < steps; s++) x = dot4I8PackedAdd(x >>> 0, DP4A_B, x);
      sum = (sum + x) | 0;
    }
    expected[t] = sum;
  }
  const [got] = await gpu.run(p, []);
  assertExact(got, expected, p.kernel.variant);
}

/** Calibrates the iteration count so a pass lasts about `targetMs`, then times it. */
async function timeCalibrated(
  gpu: ResidentDevice,
  build: (iters: number) => KernelPlan,
  options: ProbeOptions,
): Promise<{ plan: KernelPlan; ms: number; msMin: number; msMax: number; samples: number }> {
  const target = options.targetMs ?? (gpu.adapter.isFallbackAdapter ? 20 : sizeOf(gpu, options) === "full" ? 5 : 2);
  let iters = 4;
  for (let round = 0; round < 4; round++) {
    const p = build(iters);
    const out = gpu.alloc(p.bindings[0].dtype, p.bindings[0].length, "out");
    try {
      const t = await timeResident(gpu, p, [[out]], { ...timingOptions(options), samples: 5, warmup: 1 });
      if (t.ms >= target / 2) break;
      iters = Math.min(2 ** 20, Math.ceil(iters * Math.min(64, target / Math.max(t.ms, 1e-4))));
    } finally {
      out.buffer.destroy();
    }
  }
  const p = build(iters);
  const out = gpu.alloc(p.bindings[0].dtype, p.bindings[0].length, "out");
  try {
    const t = await timeResident(gpu, p, [[out]], timingOptions(options));
    return { plan: p, ms: t.ms, msMin: t.msMin, msMax: t.msMax, samples: t.samples };
  } finally {
    out.buffer.destroy();
  }
}

function defaultThreads(gpu: ResidentDevice, options: ProbeOptions): number {
  return options.threads ?? (gpu.adapter.isFallbackAdapter ? 2 ** 12 : 2 ** 23);
}

/**
 * Measures one FMA-chain kernel (f32, or f16 when the device verified f16): checks it, then times
 * it with the iteration count calibrated to `targetMs`. One vec4 `fma` counts 8 FLOPs.
 *
 * @param gpu the device (with timestamp-query)
 * @param c the kernel config
 * @param options threads, target pass time and timing options
 * @returns the result, in TFLOP/s
 * @throws Error when f16 is asked for but not verified, or the known-answer check fails
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { probeFma } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const r = await probeFma(gpu, { dtype: "f32", chains: 4, unroll: 4, workgroupSize: 256 }, {
 *   size: "small",
 *   threads: 4096,
 *   targetMs: 2,
 *   samples: 5,
 *   clockWarmupMs: 0,
 * });
 * console.log(`${r.kernel}: ${r.figure.toFixed(3)} TFLOP/s`);
 * gpu.destroy();
 * ```
 */
export async function probeFma(gpu: ResidentDevice, c: FmaConfig, options?: ProbeOptions): Promise<ProbeResult> {
  requireDevice("probeFma", gpu);
  options ??= {};
  if (c.dtype === "f16" && !gpu.f16Verified) {
    throw new Error(`${fmaName(c)}: f16 is not verified on this device (shader-f16 missing or its check failed)`);
  }
  await checkFmaKernel(gpu, c);
  const threads = defaultThreads(gpu, options);
  const t = await timeCalibrated(gpu, (iters) => fmaPlan(gpu, c, threads, iters, 64, PROBE_VALUES), options);
  return probeResult(gpu, c.dtype === "f16" ? "computeF16" : "compute", "TFLOP/s", t);
}

/**
 * Measures one DP4a kernel: checks it, then times it with a calibrated iteration count. One
 * `dot4I8Packed` call counts 8 ops (4 multiplies, 4 adds).
 *
 * @param gpu the device (with timestamp-query)
 * @param c the kernel config
 * @param options threads, target pass time and timing options
 * @returns the result, in TOPS
 * @throws Error when the WGSL language feature is missing or the known-answer check fails
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { hasDp4a, probeDp4a } from "@xpu/ops/harness/bench";
 * if (hasDp4a()) {
 *   const gpu = await acquireDevice();
 *   const r = await probeDp4a(gpu, { chains: 8, unroll: 4, workgroupSize: 256 }, {
 *     size: "small",
 *     threads: 4096,
 *     targetMs: 2,
 *     samples: 5,
 *     clockWarmupMs: 0,
 *   });
 *   console.log(`${r.kernel}: ${r.figure.toFixed(3)} TOPS`);
 *   gpu.destroy();
 * }
 * ```
 */
export async function probeDp4a(gpu: ResidentDevice, c: Dp4aConfig, options?: ProbeOptions): Promise<ProbeResult> {
  requireDevice("probeDp4a", gpu);
  options ??= {};
  if (!hasDp4a()) throw new Error(`${dp4aName(c)}: WGSL packed_4x8_integer_dot_product is not available`);
  await checkDp4aKernel(gpu, c);
  const threads = defaultThreads(gpu, options);
  const t = await timeCalibrated(gpu, (iters) => dp4aPlan(gpu, c, threads, iters, 64, false), options);
  return probeResult(gpu, "dp4a", "TOPS", t);
}

function probeResult(
  gpu: ResidentDevice,
  probe: ProbeName,
  unit: "TFLOP/s" | "TOPS",
  t: { plan: KernelPlan; ms: number; msMin: number; msMax: number; samples: number },
): ProbeResult {
  return {
    probe,
    kernel: t.plan.kernel.variant,
    figure: t.plan.cost.flops / t.ms / 1e9,
    unit,
    ms: t.ms,
    msMin: t.msMin,
    msMax: t.msMax,
    samples: t.samples,
    bytes: 0,
    ops: t.plan.cost.flops,
    ...stamp(gpu),
  };
}

/**
 * Whether WGSL's `packed_4x8_integer_dot_product` language feature (`dot4I8Packed`) is present.
 *
 * @returns true when `navigator.gpu.wgslLanguageFeatures` lists it
 *
 * @example
 * ```ts
 * import { hasDp4a } from "@xpu/ops/harness/bench";
 * console.log(hasDp4a() ? "dot4I8Packed available: the DP4a probe runs" : "no DP4a probe");
 * ```
 */
export function hasDp4a(): boolean {
  const gpu = globalThis.navigator?.gpu as (GPU & { wgslLanguageFeatures?: ReadonlySet<string> }) | undefined;
  return gpu?.wgslLanguageFeatures?.has("packed_4x8_integer_dot_product") ?? false;
}

// ---------------------------------------------------------------------------------------------
// Configurations and the roofline

/** Kernel configs to try per probe; the best figure of each list is that probe's ceiling. */
export interface ProbeConfigs {
  /** Bandwidth kernels. */
  bandwidth: BandwidthConfig[];
  /** f32 FMA kernels. */
  fma: FmaConfig[];
  /** f16 FMA kernels (run only when f16 is verified). */
  fmaF16: FmaConfig[];
  /** DP4a kernels (run only when the language feature is present). */
  dp4a: Dp4aConfig[];
}

const KINDS: BandwidthKind[] = ["copy", "read", "write"];

/**
 * The configs {@link measureRoofline} tries by default: a few per probe, chosen to be cheap.
 * The sweep ({@link sweepConfigs}) decides which of them should be the defaults on a given GPU.
 *
 * @param size full or small
 * @returns the configs
 *
 * @example
 * ```ts
 * import { defaultConfigs } from "@xpu/ops/harness/bench";
 * const small = defaultConfigs("small");
 * small.bandwidth.map((c) => c.kind); // ["copy", "read", "write"]
 * small.fma.length; // 1
 * ```
 */
export function defaultConfigs(size: ProbeSize): ProbeConfigs {
  requireProbeSize("defaultConfigs", size);
  const wg = 256;
  if (size === "small") {
    return {
      bandwidth: KINDS.map((kind) => ({ kind, perThread: 4, workgroupSize: wg })),
      fma: [{ dtype: "f32", chains: 8, unroll: 4, workgroupSize: wg }],
      fmaF16: [{ dtype: "f16", chains: 8, unroll: 4, workgroupSize: wg }],
      dp4a: [{ chains: 16, unroll: 4, workgroupSize: wg }],
    };
  }
  return {
    bandwidth: KINDS.flatMap((kind) => [1, 4].map((perThread) => ({ kind, perThread, workgroupSize: wg }))),
    fma: [[8, 16], [16, 8], [32, 4]].map(([chains, unroll]) => ({ dtype: "f32", chains, unroll, workgroupSize: wg })),
    fmaF16: [[8, 16], [16, 8]].map(([chains, unroll]) => ({ dtype: "f16", chains, unroll, workgroupSize: wg })),
    dp4a: [[16, 8], [32, 4]].map(([chains, unroll]) => ({ chains, unroll, workgroupSize: wg })),
  };
}

/**
 * The grid of configs the sweep measures: bandwidth kinds × vec4s per thread × workgroup size,
 * and FMA / DP4a chains × unroll × workgroup size.
 *
 * @param size full (the grid) or small (a handful, for a fallback adapter)
 * @returns the configs
 *
 * @example
 * ```ts
 * import { sweepConfigs } from "@xpu/ops/harness/bench";
 * sweepConfigs("small").bandwidth.length; // 6: three kinds, one or four vec4s per thread
 * sweepConfigs("full").bandwidth.length; // 36: three kinds × four vec4 counts × three workgroup sizes
 * ```
 */
export function sweepConfigs(size: ProbeSize): ProbeConfigs {
  requireProbeSize("sweepConfigs", size);
  if (size === "small") {
    return {
      bandwidth: KINDS.flatMap((kind) => [1, 4].map((perThread) => ({ kind, perThread, workgroupSize: 256 }))),
      fma: [[4, 4], [8, 4]].map(([chains, unroll]) => ({ dtype: "f32", chains, unroll, workgroupSize: 256 })),
      fmaF16: [[8, 4]].map(([chains, unroll]) => ({ dtype: "f16", chains, unroll, workgroupSize: 256 })),
      dp4a: [[8, 4], [16, 4]].map(([chains, unroll]) => ({ chains, unroll, workgroupSize: 256 })),
    };
  }
  const grid = <T>(chains: number[], unrolls: number[], make: (c: number, u: number, w: number) => T): T[] =>
    [64, 128, 256].flatMap((w) => chains.flatMap((c) => unrolls.filter((u) => c * u <= 512).map((u) => make(c, u, w))));
  return {
    bandwidth: KINDS.flatMap((kind) =>
      [1, 2, 4, 8].flatMap((perThread) => [128, 256, 512].map((workgroupSize) => ({ kind, perThread, workgroupSize })))
    ),
    fma: grid([4, 8, 16, 32], [1, 4, 8, 16, 32], (chains, unroll, workgroupSize) => ({
      dtype: "f32",
      chains,
      unroll,
      workgroupSize,
    })),
    fmaF16: grid([4, 8, 16, 32], [4, 8, 16], (chains, unroll, workgroupSize) => ({
      dtype: "f16",
      chains,
      unroll,
      workgroupSize,
    })),
    dp4a: grid([8, 16, 32, 64], [4, 8, 16], (chains, unroll, workgroupSize) => ({ chains, unroll, workgroupSize })),
  };
}

function best(results: ProbeResult[], probe: ProbeName): number | null {
  const figures = results.filter((r) => r.probe === probe).map((r) => r.figure);
  return figures.length ? Math.max(...figures) : null;
}

/**
 * Measures the device's ceilings: every config of each probe (bandwidth and f32 compute always;
 * f16 when verified; DP4a when the language feature is present), keeping the best of each. A
 * config that fails (its known-answer check, or compilation) gives no figure and is listed in
 * `skipped` with the error; at least one bandwidth and one f32 config must succeed.
 *
 * @param gpu the device (with timestamp-query)
 * @param options sizes, timing options, and a callback for each result
 * @param configs the kernels to try; default {@link defaultConfigs} for the size
 * @returns the roofline and every probe behind it
 * @throws Error when no bandwidth or no f32 config succeeded; TimestampUnavailableError without
 *   timestamps
 *
 * @example Small probes, one config each (a quick look; a real measurement takes the defaults)
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { measureRoofline } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const small = { size: "small", bandwidthBytes: 4 << 20, threads: 4096, targetMs: 2, samples: 5, clockWarmupMs: 0 } as const;
 * const r = await measureRoofline(gpu, small, {
 *   bandwidth: [{ kind: "copy", perThread: 4, workgroupSize: 256 }],
 *   fma: [{ dtype: "f32", chains: 4, unroll: 4, workgroupSize: 256 }],
 *   fmaF16: [],
 *   dp4a: [],
 * });
 * console.log(`${r.bandwidthGBps.toFixed(0)} GB/s, ${r.computeTFLOPs.toFixed(3)} TFLOP/s on ${r.adapter.description}`);
 * gpu.destroy();
 * ```
 *
 * @example The full measurement, as `deno task roofline` takes it
 * ```ts ignore
 * // ignore: full probes move 1 GiB buffers and calibrate 2^23-thread kernels: minutes on a software adapter
 * import { acquireDevice } from "@xpu/ops";
 * import { measureRoofline } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const r = await measureRoofline(gpu, { size: "full" });
 * console.log(`${r.bandwidthGBps.toFixed(0)} GB/s, ${r.computeTFLOPs.toFixed(1)} TFLOP/s on ${r.adapter.description}`);
 * gpu.destroy();
 * ```
 */
export async function measureRoofline(
  gpu: ResidentDevice,
  options?: ProbeOptions,
  configs?: ProbeConfigs,
): Promise<Roofline> {
  requireDevice("measureRoofline", gpu);
  const opts = options ?? {};
  const chosen = configs ?? defaultConfigs(sizeOf(gpu, opts));
  const probes: ProbeResult[] = [];
  const skipped: string[] = [];
  const attempt = async (name: string, run: () => Promise<ProbeResult>) => {
    try {
      const r = await run();
      probes.push(r);
      opts.onResult?.(r);
    } catch (e) {
      if (e instanceof TimestampUnavailableError) throw e;
      skipped.push(`${name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  for (const c of chosen.bandwidth) await attempt(bandwidthName(c), () => probeBandwidth(gpu, c, opts));
  for (const c of chosen.fma) await attempt(fmaName(c), () => probeFma(gpu, c, opts));
  if (gpu.f16Verified) { for (const c of chosen.fmaF16) await attempt(fmaName(c), () => probeFma(gpu, c, opts)); }
  else skipped.push("computeF16: shader-f16 not granted or its known-answer check failed");
  if (hasDp4a()) { for (const c of chosen.dp4a) await attempt(dp4aName(c), () => probeDp4a(gpu, c, opts)); }
  else skipped.push("dp4a: WGSL packed_4x8_integer_dot_product not available");
  const bandwidth = best(probes, "bandwidth"), compute = best(probes, "compute");
  if (bandwidth === null || compute === null) {
    throw new Error(`measureRoofline: no bandwidth or no f32 compute figure; failures: ${skipped.join("; ")}`);
  }
  return {
    ...stamp(gpu),
    bandwidthGBps: bandwidth,
    computeTFLOPs: compute,
    computeF16TFLOPs: best(probes, "computeF16"),
    dp4aTOPS: best(probes, "dp4a"),
    probes,
    skipped,
  };
}
