/**
 * One benchmark run, in any runtime with WebGPU (Deno or a browser page): build and filter every
 * case's plans, measure the roofline, time each plan, and assemble the {@link BenchReport} that
 * `deno task bench` writes and `--compare` reads. Nothing here reads arguments or writes files;
 * progress goes to a callback. The CLI (`harness/bench.ts`, Deno-only) adds argument parsing, the
 * TF.js peer, the printed table and the files; the page `examples/roofline/` adds checkboxes, the
 * chart and a download link.
 *
 * @module
 */

import { requireDevice, type ResidentDevice } from "./device.ts";
import { LimitError } from "./limits.ts";
import type { BenchCase, BenchShape, SizeClass } from "./bench_case.ts";
import {
  type BenchConditions,
  type BenchDevice,
  type BenchReport,
  type BenchRow,
  type CompareOptions,
  regressionRule,
  rowFigures,
  rowKey,
  SCHEMA,
} from "./report.ts";
import { measureRoofline, type ProbeResult, type Roofline } from "./roofline.ts";
import {
  CLOCK_WARMUP_MS,
  supportsTimestamps,
  type Timed,
  timePlan,
  TimestampUnavailableError,
  variantOf,
} from "./timing.ts";
import { variantsOf } from "./variants.ts";

/** One plan to time: a case at one shape (and one variant), with its row key. */
export interface BenchJob {
  /** The case. */
  case: BenchCase;
  /** The shape. */
  shape: BenchShape;
  /** The plan (or sequence) built for it on this device. */
  plan: Timed;
  /** `op/entry/variant/shape`, what filters match. */
  key: string;
}

/** What a run reports as it goes, in order: skipped plans, then probes, then one event per job. */
export type BenchProgress =
  | { kind: "skip"; where: string; reason: string }
  | { kind: "probes"; jobs: number }
  | { kind: "probe"; result: ProbeResult }
  | { kind: "probes-skipped"; reason: string }
  | { kind: "row"; key: string; row: BenchRow; done: number; total: number }
  | { kind: "failed"; key: string; message: string; done: number; total: number };

/** How a run is taken. */
export interface BenchRunOptions {
  /** Which shape list runs: `gpu`, or `quick` (a fallback adapter's; its probes are small too). */
  sizes: SizeClass;
  /** Timed passes per figure (at least 5). */
  samples: number;
  /** Untimed passes before them. */
  warmup: number;
  /** Cache size the input rotation defeats, bytes (0: one input set). */
  cacheBytes: number;
  /** Keep only jobs whose key contains one of these (none: keep all). */
  filters?: readonly string[];
  /** Time every variant of each entry point, not only the one resolved on this device. */
  allVariants?: boolean;
  /** The runtime, recorded as the report's `deno` field: a Deno version, or `browser: <userAgent>`. */
  runtime: string;
  /** Operating system and architecture, as the runtime tells them. */
  os: string;
  /** A driver string to record, as given, when the adapter exposes none (e.g. from nvidia-smi). */
  driver?: string;
  /** The regression thresholds a later `--compare` is told about (the rule is written into the report). */
  compare?: CompareOptions;
  /** Called with each step's result as it is taken. */
  onProgress?: (event: BenchProgress) => void;
}

/** A finished run: the report, the jobs behind its rows (in the same order) and how many jobs failed. */
export interface BenchRun {
  /** The report, as `deno task bench` writes it (rows carry `peer: null`). */
  report: BenchReport;
  /** The job each row of `report.results` was timed from. */
  timed: BenchJob[];
  /** Jobs that failed (each reported through `onProgress`); their rows are absent. */
  failures: number;
}

/**
 * Thrown by {@link runBench} when no job is left to run, before any GPU work.
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { defineCase, NoBenchJobError, randomInput, runBench } from "@xpu/ops/harness/bench";
 * import { KERNELS } from "@xpu/ops/ops/elementwise";
 * const add = defineCase({
 *   op: "elementwise",
 *   entry: "kernel",
 *   sources: KERNELS,
 *   gpu: [{ n: 1 << 24 }],
 *   quick: [{ n: 1 << 12 }],
 *   label: ({ n }) => `${n}`,
 *   plan: (gpu, { n }, options) => elementwisePlan(gpu, { op: "add", n }, options),
 *   inputs: ({ n }, seed) => [randomInput(n, seed), randomInput(n, seed + 1)],
 * });
 * const gpu = await acquireDevice();
 * try {
 *   await runBench(gpu, [add], {
 *     sizes: "quick", filters: ["softmax"], samples: 5, warmup: 1, cacheBytes: 0, runtime: "deno", os: "linux",
 *   });
 * } catch (e) {
 *   if (!(e instanceof NoBenchJobError)) throw e;
 *   e.filters; // ["softmax"]
 *   e.example; // "elementwise/kernel"
 * } finally {
 *   gpu.destroy();
 * }
 * ```
 */
export class NoBenchJobError extends Error {
  /**
   * Creates the error.
   *
   * @param filters the filters that matched nothing (empty: no case was given)
   * @param example an `op/entry` a filter could name, if any case was given
   */
  constructor(readonly filters: readonly string[], readonly example: string | null) {
    super(
      filters.length
        ? `filter ${filters.map((f) => `"${f}"`).join(", ")}: no case matches (keys are op/entry/variant/shape, ` +
          `e.g. ${example ? `"${example}"` : "none: no cases were given"})`
        : "no bench case to run",
    );
    this.name = "NoBenchJobError";
  }
}

/**
 * Builds every case's plan at the shapes of one size class (cheap: no GPU work) and keeps those a
 * filter matches. A plan the device's limits refuse is skipped and reported, never fatal.
 *
 * @param gpu the device
 * @param cases the bench cases
 * @param options the size class, filters, whether every variant runs, and the progress callback
 * @returns the jobs, in case, variant, shape order
 * @throws NoBenchJobError when no job is left
 */
function benchJobs(
  gpu: ResidentDevice,
  cases: readonly BenchCase[],
  options: Pick<BenchRunOptions, "sizes" | "filters" | "allVariants" | "onProgress">,
): BenchJob[] {
  const filters = options.filters ?? [];
  const jobs: BenchJob[] = [];
  for (const c of cases) {
    // A sequence's entry (e.g. `decode+combine`) names no kernel: it runs as resolved.
    const variants: (string | undefined)[] = options.allVariants && c.entry in c.sources
      ? variantsOf(c.sources, c.entry).filter((v) => !v.endsWith(".f16") || gpu.f16Verified)
      : [undefined];
    for (const variant of variants) {
      for (const shape of c.shapes[options.sizes]) {
        let plan: Timed;
        try {
          plan = shape.plan(gpu, variant ? { override: variant } : {});
        } catch (e) {
          if (!(e instanceof LimitError)) throw e;
          const where = `${c.op}/${c.entry}/${variant ?? "(resolved)"}/${shape.label}`;
          options.onProgress?.({ kind: "skip", where, reason: e.message });
          continue;
        }
        const key = rowKey({ op: c.op, entry: c.entry, variant: variantOf(plan), shape: shape.label });
        if (filters.length && !filters.some((f) => key.includes(f))) continue;
        jobs.push({ case: c, shape, plan, key });
      }
    }
  }
  if (jobs.length === 0) throw new NoBenchJobError(filters, cases[0] ? `${cases[0].op}/${cases[0].entry}` : null);
  return jobs;
}

/**
 * Times each job and derives its row's figures against the roofline. A job the limits refuse is
 * skipped; any other failure is counted and reported, and the run goes on; a device that cannot
 * time on the GPU stops it.
 *
 * @param gpu the device
 * @param jobs the jobs (from {@link benchJobs})
 * @param roof the measured roofline
 * @param options samples, warm-up, cache size and the progress callback
 * @returns the rows, the jobs they came from, and the number of failures
 * @throws TimestampUnavailableError when no GPU time can be read
 */
async function timeJobs(
  gpu: ResidentDevice,
  jobs: readonly BenchJob[],
  roof: Roofline,
  options: Pick<BenchRunOptions, "samples" | "warmup" | "cacheBytes" | "onProgress">,
): Promise<{ rows: BenchRow[]; timed: BenchJob[]; failures: number }> {
  const timing = { samples: options.samples, warmup: options.warmup, cacheBytes: options.cacheBytes };
  const rows: BenchRow[] = [], timed: BenchJob[] = [];
  let failures = 0;
  for (const [i, job] of jobs.entries()) {
    const { case: c, shape, plan, key } = job;
    const done = i + 1, total = jobs.length;
    try {
      const t = await timePlan(gpu, plan, (set) => shape.inputs(1000 * set + 1), timing);
      const row: BenchRow = {
        op: c.op,
        entry: c.entry,
        variant: variantOf(plan),
        shape: shape.label,
        ms: t.ms,
        msMin: t.msMin,
        msMax: t.msMax,
        msQ1: t.msQ1,
        msQ3: t.msQ3,
        samples: t.samples,
        bytes: plan.cost.bytes,
        flops: plan.cost.flops,
        ...rowFigures(plan.cost, t.ms, roof),
        sets: t.sets,
        cacheResident: t.cacheResident,
        peer: null,
        vsPeer: null,
      };
      rows.push(row);
      timed.push(job);
      options.onProgress?.({ kind: "row", key, row, done, total });
    } catch (e) {
      if (e instanceof TimestampUnavailableError) throw e;
      if (e instanceof LimitError) {
        options.onProgress?.({ kind: "skip", where: key, reason: e.message });
        continue;
      }
      failures++;
      options.onProgress?.({ kind: "failed", key, message: e instanceof Error ? e.message : String(e), done, total });
    }
  }
  return { rows, timed, failures };
}

/**
 * The report's device block: the adapter, the runtime, and the ceilings this run measured.
 *
 * @param gpu the device
 * @param roof the measured roofline
 * @param options the runtime, the OS and a driver string for an adapter that exposes none
 * @returns the device block
 */
function benchDevice(
  gpu: ResidentDevice,
  roof: Roofline,
  options: Pick<BenchRunOptions, "runtime" | "os" | "driver">,
): BenchDevice {
  return {
    description: roof.adapter.description,
    vendor: roof.adapter.vendor,
    architecture: roof.adapter.architecture,
    driver: roof.adapter.driver ?? options.driver ?? null,
    isFallbackAdapter: roof.adapter.isFallbackAdapter,
    target: gpu.adapter.target ?? null,
    features: gpu.features,
    deno: options.runtime,
    os: options.os,
    date: roof.date,
    bandwidthGBps: roof.bandwidthGBps,
    computeTFLOPs: roof.computeTFLOPs,
    computeF16TFLOPs: roof.computeF16TFLOPs,
    dp4aTOPS: roof.dp4aTOPS,
    probes: roof.probes,
    skipped: roof.skipped,
  };
}

/**
 * The report's conditions: how the figures were taken, in words and numbers.
 *
 * @param device the device block (its date and runtime are repeated)
 * @param options sizes, samples, warm-up, cache size and the regression thresholds
 * @returns the conditions (no `peer`: the caller that runs one adds it)
 */
function benchConditions(
  device: BenchDevice,
  options: Pick<BenchRunOptions, "sizes" | "samples" | "warmup" | "cacheBytes" | "compare">,
): BenchConditions {
  return {
    method: `Each row is one KernelPlan (or one KernelSequence: an operation's dispatches in one pass) on resident ` +
      `tensors: a warm-up submission; at least ${CLOCK_WARMUP_MS} ms ` +
      `of GPU work to raise the clocks, until an FMA loop stops getting faster; then one command buffer of ` +
      `${options.warmup} untimed and ${options.samples} timed compute passes (one dispatch each, or a sequence's); ` +
      `the figure is the median pass. Inputs are random, never zero; working sets smaller than the cache rotate over ` +
      `several input sets. Bytes and FLOPs are the op's declared cost. Ceilings are this run's probes.`,
    repetitions: options.samples,
    warmup: options.warmup,
    timestamps: "timestamp-query written at the beginning and end of each timed pass, BigInt nanoseconds",
    date: device.date,
    deno: device.deno,
    sizes: options.sizes,
    cacheBytes: options.cacheBytes,
    regression: regressionRule(options.compare ?? {}),
  };
}

/**
 * Runs the bench over `cases` on `gpu`: builds and filters the jobs (before any GPU work), measures
 * the roofline (small probes for `quick` sizes), times every job, and assembles the report that
 * `deno task bench` writes (`reportJson` serialises it, `reportHtml` / `rooflineSvg` draw it, and
 * `deno task bench --compare` reads it back). No peer runs here.
 *
 * @param gpu a device granted `timestamp-query` (the device is not destroyed)
 * @param cases the bench cases (each op's `BENCH`, or cases built with `defineCase`)
 * @param options sizes, timing, filters, runtime and OS to record, and the progress callback
 * @returns the report, the job behind each row, and the number of failed jobs
 * @throws TimestampUnavailableError when the device cannot time on the GPU; NoBenchJobError when no
 *   job is left after the filters
 *
 * @example
 * ```ts
 * // In Deno or a page alike; about 30 s on a software adapter, most of it the roofline's small probes.
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { defineCase, randomInput, reportJson, runBench } from "@xpu/ops/harness/bench";
 * import { KERNELS } from "@xpu/ops/ops/elementwise";
 *
 * const add = defineCase({
 *   op: "elementwise", entry: "kernel", sources: KERNELS, gpu: [1 << 24], quick: [1 << 16],
 *   label: (n) => `${n}`,
 *   plan: (gpu, n, options) => elementwisePlan(gpu, { op: "add", n }, options),
 *   inputs: (n, seed) => [randomInput(n, seed), randomInput(n, seed + 1)],
 * });
 * const gpu = await acquireDevice();
 * const { report } = await runBench(gpu, [add], {
 *   sizes: "quick", samples: 5, warmup: 1, cacheBytes: 50 * 2 ** 20,
 *   runtime: navigator.userAgent, os: navigator.platform,
 *   onProgress: (event) => console.log(event.kind),
 * });
 * console.log(reportJson(report));
 * gpu.destroy();
 * ```
 */
export async function runBench(
  gpu: ResidentDevice,
  cases: readonly BenchCase[],
  options: BenchRunOptions,
): Promise<BenchRun> {
  requireDevice("runBench", gpu);
  if (!supportsTimestamps(gpu)) {
    throw new TimestampUnavailableError(`${gpu.adapter.description} does not offer timestamp-query`);
  }
  const jobs = benchJobs(gpu, cases, options);
  options.onProgress?.({ kind: "probes", jobs: jobs.length });
  const roof = await measureRoofline(gpu, {
    samples: options.samples,
    warmup: options.warmup,
    cacheBytes: options.cacheBytes,
    size: options.sizes === "quick" ? "small" : "full",
    onResult: (result) => options.onProgress?.({ kind: "probe", result }),
  });
  for (const reason of roof.skipped) options.onProgress?.({ kind: "probes-skipped", reason });
  const { rows, timed, failures } = await timeJobs(gpu, jobs, roof, options);
  const device = benchDevice(gpu, roof, options);
  const report: BenchReport = { schema: SCHEMA, device, conditions: benchConditions(device, options), results: rows };
  return { report, timed, failures };
}
