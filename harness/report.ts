/**
 * Benchmark results: the figures of a row, the JSON file, the text table, the HTML/SVG roofline
 * chart, and the comparison with a saved result.
 *
 * The JSON is one object, `{ schema, device, conditions, results }`; other tools read it, so the
 * field names of {@link BenchDevice} and {@link BenchRow} are fixed. A row's `fraction` is the
 * achieved figure over the ceiling of the bound that applies: bandwidth when the row's arithmetic
 * intensity (FLOPs per byte) is below the ridge point (compute roofline / bandwidth roofline),
 * compute otherwise. It is not clamped: above 1 means the data was served from a cache or the probe
 * is not yet a ceiling, and either is worth seeing.
 *
 * Regression rule ({@link compareReports}): a row regresses when its fraction dropped by more
 * than `max(0.05, 3 × spread)`, where spread is the larger of the two runs' interquartile range
 * of the pass times, expressed in fraction units (`fraction × (q3 − q1) / median`).
 *
 * A row may carry a peer's figure (`peer`: another implementation of the same op, timed on the same
 * device at the same shape in the same run, e.g. TF.js's WebGPU backend) and `vsPeer`, our time over
 * the peer's (below 1: ours is faster). Both are null when there is no peer figure, and absent in
 * files written before peers existed; they take no part in the regression rule.
 *
 * Nothing here touches files; `harness/bench.ts` does.
 *
 * @module
 */

import type { Roofline } from "./roofline.ts";

/** The ceiling a row is held to. */
export type Bound = "bandwidth" | "compute";

/** The device a result was measured on, and its measured ceilings. */
export interface BenchDevice
  extends Pick<Roofline, "bandwidthGBps" | "computeTFLOPs" | "computeF16TFLOPs" | "dp4aTOPS" | "probes" | "skipped"> {
  /** Adapter description (the driver's name for the device). */
  description: string;
  /** Adapter vendor string. */
  vendor: string;
  /** Adapter architecture string. */
  architecture: string;
  /** Driver string, when the runtime exposes one; null otherwise. */
  driver: string | null;
  /** Whether the adapter is a fallback (software) one. */
  isFallbackAdapter: boolean;
  /** The target detected (nvidia, amd, apple, soc) or null. */
  target: string | null;
  /** Features granted on the device. */
  features: string[];
  /** Deno version. */
  deno: string;
  /** Operating system and architecture. */
  os: string;
  /** ISO date and time of the run. */
  date: string;
}

/** How the figures were taken. */
export interface BenchConditions {
  /** The method, in words. */
  method: string;
  /** Timed passes per figure. */
  repetitions: number;
  /** Untimed passes before them. */
  warmup: number;
  /** How time was read. */
  timestamps: string;
  /** ISO date and time. */
  date: string;
  /** Deno version. */
  deno: string;
  /** Which list of shapes ran: "gpu" or "quick". */
  sizes: "gpu" | "quick";
  /** Cache size the input rotation was sized against, bytes. */
  cacheBytes: number;
  /** The regression rule `--compare` applies. */
  regression: string;
  /** The peer and how its figures were taken, or why no peer ran; absent in older files. */
  peer?: string;
}

/** A peer's figure at a row's shape: the same op in another implementation, same device, same run. */
export interface PeerFigure {
  /** The peer and its version, e.g. `tfjs-webgpu 4.22.0`. */
  name: string;
  /** The peer's call, e.g. `matMul {"m":4096,"k":4096,"n":4096}`. */
  call: string;
  /** Median GPU time of one call, ms (its kernels summed). */
  ms: number;
  /** Kernels one call dispatches. */
  kernels: number;
}

/** One benchmark figure. */
export interface BenchRow {
  /** The op, e.g. `elementwise`. */
  op: string;
  /** Its entry point, e.g. `kernel`. */
  entry: string;
  /** The variant that ran, e.g. `kernel.nvidia`. */
  variant: string;
  /** The shape, dimensions joined by `x`, e.g. `4096x4096`. */
  shape: string;
  /** Median pass time, ms. */
  ms: number;
  /** Fastest pass, ms. */
  msMin: number;
  /** Slowest pass, ms. */
  msMax: number;
  /** First quartile of the pass times, ms. */
  msQ1: number;
  /** Third quartile, ms. */
  msQ3: number;
  /** Timed passes. */
  samples: number;
  /** Bytes the call must move (KernelPlan.cost). */
  bytes: number;
  /** FLOPs the call must do (KernelPlan.cost). */
  flops: number;
  /** Achieved GB/s (bytes / median time). */
  gbps: number;
  /** Achieved TFLOP/s (FLOPs / median time). */
  tflops: number;
  /** FLOPs per byte; null when the call moves no bytes. */
  intensity: number | null;
  /** Achieved / the bound's roofline (0..1 expected; not clamped). */
  fraction: number;
  /** Which roofline applies. */
  bound: Bound;
  /** Input sets rotated over. */
  sets: number;
  /** Whether all sets together fit in the cache (the figure may be cache-served). */
  cacheResident: boolean;
  /** The peer's figure at this shape, or null (no counterpart, peer off or failed: see `peerNote`). */
  peer?: PeerFigure | null;
  /** `ms / peer.ms`: below 1, ours is faster; null without a peer figure. */
  vsPeer?: number | null;
  /** Why `peer` is null when a peer ran: no counterpart for this case or shape, or its failure. */
  peerNote?: string;
}

/** A whole result file. */
export interface BenchReport {
  /** Format tag, `xpu-ops-bench/1`. */
  schema: string;
  /** The device and its ceilings. */
  device: BenchDevice;
  /** How the figures were taken. */
  conditions: BenchConditions;
  /** One row per op, entry, variant and shape. */
  results: BenchRow[];
}

/** The schema tag written into every result file. */
export const SCHEMA: string = "xpu-ops-bench/1";

/** The default regression rule: absolute floor and multiple of the measured spread. */
export const REGRESSION_RULE: { readonly absolute: number; readonly spreadFactor: number } = {
  absolute: 0.05,
  spreadFactor: 3,
};

/** The figures derived from a cost, a time and the two ceilings. */
export interface RowFigures {
  /** Achieved GB/s. */
  gbps: number;
  /** Achieved TFLOP/s. */
  tflops: number;
  /** FLOPs per byte, or null without bytes. */
  intensity: number | null;
  /** The roofline that applies. */
  bound: Bound;
  /** Achieved / that roofline. */
  fraction: number;
}

/**
 * Derives a row's figures: achieved rates, intensity, the bound (bandwidth below the ridge point,
 * compute at or above it, or when nothing is moved) and the fraction of that bound's roofline.
 *
 * @param cost bytes and FLOPs one call must do
 * @param ms the call's time, ms
 * @param ceilings bandwidth (GB/s) and compute (TFLOP/s) rooflines
 * @returns the figures
 *
 * @example
 * ```ts
 * import { rowFigures } from "@xpu/ops/harness/bench";
 * // 1 GB moved and 0.25 GFLOP in 1 ms, against 2000 GB/s and 50 TFLOP/s: bandwidth-bound at 50%.
 * rowFigures({ bytes: 1e9, flops: 2.5e8 }, 1, { bandwidthGBps: 2000, computeTFLOPs: 50 }).fraction; // 0.5
 * ```
 */
export function rowFigures(
  cost: { bytes: number; flops: number },
  ms: number,
  ceilings: { bandwidthGBps: number; computeTFLOPs: number },
): RowFigures {
  const gbps = cost.bytes / ms / 1e6;
  const tflops = cost.flops / ms / 1e9;
  const intensity = cost.bytes > 0 ? cost.flops / cost.bytes : null;
  const ridge = (ceilings.computeTFLOPs * 1e3) / ceilings.bandwidthGBps;
  const bound: Bound = intensity !== null && intensity < ridge ? "bandwidth" : "compute";
  const fraction = bound === "bandwidth" ? gbps / ceilings.bandwidthGBps : tflops / ceilings.computeTFLOPs;
  return { gbps, tflops, intensity, bound, fraction };
}

/**
 * The key rows are matched by across runs.
 *
 * @param row a row
 * @returns `op/entry/variant/shape`
 *
 * @example
 * ```ts
 * import { rowKey } from "@xpu/ops/harness/bench";
 * rowKey({ op: "softmax", entry: "kernel", variant: "kernel.nvidia", shape: "4096x4096" }); // "softmax/kernel/kernel.nvidia/4096x4096"
 * ```
 */
export function rowKey(row: Pick<BenchRow, "op" | "entry" | "variant" | "shape">): string {
  return `${row.op}/${row.entry}/${row.variant}/${row.shape}`;
}

type TypeName = "string" | "number";
const DEVICE_FIELDS: [keyof BenchDevice, TypeName][] = [
  ["description", "string"],
  ["vendor", "string"],
  ["deno", "string"],
  ["date", "string"],
  ["bandwidthGBps", "number"],
  ["computeTFLOPs", "number"],
];
const ROW_FIELDS: [keyof BenchRow, TypeName][] = [
  ["op", "string"],
  ["entry", "string"],
  ["variant", "string"],
  ["shape", "string"],
  ["ms", "number"],
  ["gbps", "number"],
  ["tflops", "number"],
  ["fraction", "number"],
  ["bound", "string"],
];

function typeName(value: unknown): string {
  return typeof value;
}

/** A row's optional peer fields: absent, null, or well-formed. */
function checkPeer(row: BenchRow, where: string): void {
  const peer: unknown = row.peer;
  if (peer !== undefined && peer !== null) {
    if (typeof peer !== "object") throw new Error(`${where}.peer must be an object or null`);
    const p = peer as Record<string, unknown>;
    for (const [field, type] of [["name", "string"], ["ms", "number"], ["kernels", "number"]] as const) {
      if (typeName(p[field]) !== type) throw new Error(`${where}.peer.${field} must be a ${type}`);
    }
  }
  if (row.vsPeer !== undefined && row.vsPeer !== null && typeof row.vsPeer !== "number") {
    throw new Error(`${where}.vsPeer must be a number or null`);
  }
  if ((row.vsPeer ?? null) !== null && (peer ?? null) === null) throw new Error(`${where}.vsPeer without a peer`);
}

/**
 * Our time over a peer's, or null without a peer figure.
 *
 * @param ms our median time, ms
 * @param peer the peer's figure, or null
 * @returns `ms / peer.ms` (below 1: ours is faster), or null
 */
export function vsPeer(ms: number, peer: PeerFigure | null | undefined): number | null {
  return peer && peer.ms > 0 ? ms / peer.ms : null;
}

/**
 * Parses a result file, checking the fields other tools rely on.
 *
 * @param text the JSON
 * @param label where it came from, for messages
 * @returns the report
 * @throws Error naming `label` (the file) and the problem: empty text, invalid JSON, the first missing
 *   or mistyped field, a negative or non-finite figure, or no rows
 *
 * @example
 * ```ts
 * import { parseReport } from "@xpu/ops/harness/bench";
 * const text = JSON.stringify({
 *   schema: "xpu-ops-bench/1",
 *   device: { description: "llvmpipe", vendor: "mesa", deno: "2.9.6", date: "2026-12-02", bandwidthGBps: 20, computeTFLOPs: 0.2 },
 *   results: [{
 *     op: "softmax", entry: "kernel", variant: "kernel", shape: "1024x1024",
 *     ms: 0.5, gbps: 16.8, tflops: 0.0105, fraction: 0.84, bound: "bandwidth",
 *   }],
 * }); // in practice, the text of a file `deno task bench` wrote
 * const report = parseReport(text, "bench.json");
 * report.results.length; // 1
 * ```
 */
export function parseReport(text: string, label?: string): BenchReport {
  label ??= "result";
  if (typeof text !== "string") {
    throw new Error(`${label}: text must be a bench result's JSON text, got ${String(text)}`);
  }
  if (text.trim() === "") throw new Error(`${label}: the file is empty, not a bench result`);
  let data: BenchReport;
  try {
    data = JSON.parse(text) as BenchReport;
  } catch (e) {
    throw new Error(`${label}: not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (typeof data !== "object" || data === null) throw new Error(`${label}: not a JSON object`);
  if (typeof data.device !== "object" || data.device === null) {
    throw new Error(`${label}: not a bench result (no "device" object)`);
  }
  for (const [field, type] of DEVICE_FIELDS) {
    if (typeName(data.device[field]) !== type) throw new Error(`${label}: device.${field} must be a ${type}`);
  }
  if (!Array.isArray(data.results)) throw new Error(`${label}: "results" must be a list`);
  for (const [i, row] of data.results.entries()) {
    for (const [field, type] of ROW_FIELDS) {
      if (typeName(row[field]) !== type) throw new Error(`${label}: results[${i}].${field} must be a ${type}`);
    }
    for (const field of ["ms", "fraction", "gbps", "tflops"] as const) {
      if (!Number.isFinite(row[field]) || row[field] < 0) {
        throw new Error(`${label}: results[${i}].${field} must be a finite number >= 0, got ${row[field]}`);
      }
    }
    if (row.bound !== "bandwidth" && row.bound !== "compute") {
      throw new Error(`${label}: results[${i}].bound must be "bandwidth" or "compute", got "${row.bound}"`);
    }
    checkPeer(row, `${label}: results[${i}]`);
  }
  if (data.results.length === 0) throw new Error(`${label}: "results" is empty: there is nothing to compare with`);
  return data;
}

/**
 * Serialises a report as the result file (two-space indented JSON, one trailing newline).
 *
 * @param report the report
 * @returns the JSON text
 *
 * @example
 * ```ts
 * import { type BenchReport, parseReport, reportJson, SCHEMA } from "@xpu/ops/harness/bench";
 * const report: BenchReport = {
 *   schema: SCHEMA,
 *   device: {
 *     description: "llvmpipe", vendor: "mesa", architecture: "", driver: null, isFallbackAdapter: true,
 *     target: null, features: ["timestamp-query"], deno: "2.9.6", os: "linux x86_64", date: "2026-12-02T00:00Z",
 *     bandwidthGBps: 20, computeTFLOPs: 0.2, computeF16TFLOPs: null, dp4aTOPS: null, probes: [], skipped: [],
 *   },
 *   conditions: {
 *     method: "median of GPU timestamps", repetitions: 10, warmup: 3, timestamps: "timestamp-query",
 *     date: "2026-12-02T00:00Z", deno: "2.9.6", sizes: "quick", cacheBytes: 50 << 20, regression: "none",
 *   },
 *   results: [{
 *     op: "softmax", entry: "kernel", variant: "kernel", shape: "1024x1024", ms: 0.5, msMin: 0.48, msMax: 0.6,
 *     msQ1: 0.49, msQ3: 0.52, samples: 10, bytes: 8388608, flops: 5242880, gbps: 16.8, tflops: 0.0105,
 *     intensity: 0.625, fraction: 0.84, bound: "bandwidth", sets: 13, cacheResident: false,
 *   }],
 * };
 * const text = reportJson(report); // what `deno task bench` writes to its result file
 * parseReport(text).results[0].shape; // "1024x1024"
 * ```
 */
export function reportJson(report: BenchReport): string {
  return JSON.stringify(report, null, 2) + "\n";
}

// ---------------------------------------------------------------------------------------------
// Comparison

/** Options of {@link compareReports}. */
export interface CompareOptions {
  /** Absolute floor of the threshold, in fraction units. Default 0.05. */
  absolute?: number;
  /** Multiple of the measured spread. Default 3. */
  spreadFactor?: number;
}

/** One matched row. */
export interface RowComparison {
  /** `op/entry/variant/shape`. */
  key: string;
  /** Fraction in the saved result. */
  baseline: number;
  /** Fraction now. */
  current: number;
  /** baseline − current (positive: worse). */
  drop: number;
  /** The drop allowed for this row. */
  threshold: number;
  /** Whether the drop exceeds the threshold. */
  regressed: boolean;
  /** Set when the bound differs between the runs (the fractions refer to different ceilings). */
  note?: string;
}

/** The outcome of comparing a run with a saved result. */
export interface Comparison {
  /** Every matched row. */
  rows: RowComparison[];
  /** The matched rows that regressed. */
  regressions: RowComparison[];
  /** Keys in the saved result that this run did not produce. */
  missing: string[];
  /** Keys this run produced that the saved result lacks. */
  added: string[];
  /** The rule applied, in words. */
  rule: string;
}

/**
 * A row's spread in fraction units: `fraction × (q3 − q1) / median` of its pass times.
 *
 * @param row a row (rows without quartiles have no measured spread: 0)
 * @returns the spread
 */
export function fractionSpread(row: Pick<BenchRow, "fraction" | "ms"> & Partial<BenchRow>): number {
  if (typeof row.msQ1 !== "number" || typeof row.msQ3 !== "number" || !(row.ms > 0)) return 0;
  return (row.fraction * (row.msQ3 - row.msQ1)) / row.ms;
}

/**
 * The regression rule in words.
 *
 * @param options the floor and the spread multiple
 * @returns e.g. `fraction dropped by more than max(0.05, 3 × spread) ...`
 */
export function regressionRule(options?: CompareOptions): string {
  options ??= {};
  const absolute = options.absolute ?? REGRESSION_RULE.absolute;
  const factor = options.spreadFactor ?? REGRESSION_RULE.spreadFactor;
  return `fraction of roofline dropped by more than max(${absolute}, ${factor} x spread), spread = the larger ` +
    `interquartile range of the two runs' pass times in fraction units (fraction x (q3 - q1) / median)`;
}

/**
 * Compares a run with a saved result, row by row (matched by op, entry, variant and shape).
 *
 * @param baseline the saved result
 * @param current this run
 * @param options the threshold's floor and spread multiple
 * @returns matched rows, regressions, and the rows only one side has
 *
 * @example
 * ```ts
 * import { compareReports, parseReport } from "@xpu/ops/harness/bench";
 * // In practice: parseReport(await Deno.readTextFile(saved)) and the report of this run.
 * const result = (fraction: number) =>
 *   parseReport(JSON.stringify({
 *     device: { description: "H200", vendor: "nvidia", deno: "2.9.6", date: "2026-12-02", bandwidthGBps: 4000, computeTFLOPs: 50 },
 *     results: [{
 *       op: "softmax", entry: "kernel", variant: "kernel", shape: "4096x4096",
 *       ms: 0.1, gbps: 3000, tflops: 0.1, fraction, bound: "bandwidth",
 *     }],
 *   }));
 * const c = compareReports(result(0.84), result(0.7));
 * c.regressions.map((r) => r.key); // ["softmax/kernel/kernel/4096x4096"]: a drop of 0.14, over the 0.05 floor
 * ```
 */
export function compareReports(
  baseline: Pick<BenchReport, "results">,
  current: Pick<BenchReport, "results">,
  options?: CompareOptions,
): Comparison {
  options ??= {};
  for (const [name, report] of [["baseline", baseline], ["current", current]] as const) {
    if (!Array.isArray((report as Partial<BenchReport> | null)?.results)) {
      throw new Error(
        `compareReports: ${name} must be a bench result ({ results: [...] }, parseReport's), got ${String(report)}`,
      );
    }
  }
  for (const [name, report] of [["baseline", baseline], ["current", current]] as const) {
    if (!Array.isArray((report as Partial<BenchReport> | null)?.results)) {
      throw new Error(
        `compareReports: ${name} must be a bench result ({ results: [...] }, parseReport's), got ${String(report)}`,
      );
    }
  }
  const absolute = options.absolute ?? REGRESSION_RULE.absolute;
  const factor = options.spreadFactor ?? REGRESSION_RULE.spreadFactor;
  const now = new Map(current.results.map((r) => [rowKey(r), r]));
  const before = new Set(baseline.results.map(rowKey));
  const rows: RowComparison[] = [];
  const missing: string[] = [];
  for (const base of baseline.results) {
    const key = rowKey(base);
    const cur = now.get(key);
    if (!cur) {
      missing.push(key);
      continue;
    }
    const threshold = Math.max(absolute, factor * Math.max(fractionSpread(base), fractionSpread(cur)));
    const drop = base.fraction - cur.fraction;
    const row: RowComparison = {
      key,
      baseline: base.fraction,
      current: cur.fraction,
      drop,
      threshold,
      regressed: drop > threshold,
    };
    if (base.bound !== cur.bound) row.note = `bound changed: ${base.bound} -> ${cur.bound}`;
    rows.push(row);
  }
  const added = current.results.map(rowKey).filter((k) => !before.has(k));
  return { rows, regressions: rows.filter((r) => r.regressed), missing, added, rule: regressionRule(options) };
}

/**
 * The comparison as text: the rule, each regression, and what only one side has.
 *
 * @param c the comparison
 * @returns the text
 */
export function formatComparison(c: Comparison): string {
  const lines = [`compare: ${c.rows.length} rows matched; rule: ${c.rule}`];
  for (const r of c.rows) {
    if (r.regressed) {
      lines.push(
        `REGRESSION ${r.key}: ${percent(r.baseline)} -> ${percent(r.current)} of roofline ` +
          `(drop ${percent(r.drop)} > threshold ${percent(r.threshold)})${r.note ? `; ${r.note}` : ""}`,
      );
    } else if (r.note) lines.push(`note ${r.key}: ${r.note}`);
  }
  if (c.missing.length) lines.push(`not run now (in the saved result): ${c.missing.join(", ")}`);
  if (c.added.length) lines.push(`new (not in the saved result): ${c.added.join(", ")}`);
  lines.push(c.regressions.length ? `${c.regressions.length} regression(s)` : "no regressions");
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Text table

/**
 * Formats a number with about three significant digits, without exponents for common ranges.
 *
 * @param x the number
 * @returns the text
 */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a === 0) return "0";
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  if (a >= 0.001) return x.toPrecision(3);
  return x.toExponential(2);
}

/** A row's GFLOP/s and FLOP/B cells: `-` for a row whose cost has no FLOPs (a copy, a gather) or no bytes. */
function flopCells(r: BenchRow): [string, string] {
  if (r.flops === 0) return ["-", "-"];
  return [fmt(r.tflops * 1e3), r.intensity === null ? "-" : fmt(r.intensity)];
}

/**
 * A fraction as a percentage with one decimal, and with three significant digits below 0.1%, so a
 * small figure (a tiny shape on a software adapter) reads as what it is rather than `0.0%`.
 *
 * @param fraction the fraction (1 = 100%)
 * @returns e.g. `84.4%`, `0.0123%`
 *
 * @example
 * ```ts
 * import { percent } from "@xpu/ops/harness/bench";
 * percent(0.8437); // "84.4%"
 * percent(0.000123); // "0.0123%"
 * ```
 */
export function percent(fraction: number): string {
  const p = 100 * fraction;
  return `${Math.abs(p) >= 0.1 || p === 0 ? p.toFixed(1) : fmt(p)}%`;
}

/**
 * The device line and the ceilings, as printed above the table.
 *
 * @param device the device block of a report
 * @returns one or more lines
 *
 * @example
 * ```ts
 * import { deviceSummary } from "@xpu/ops/harness/bench";
 * console.log(deviceSummary({
 *   description: "llvmpipe", vendor: "mesa", architecture: "", driver: null, isFallbackAdapter: true,
 *   target: null, features: [], deno: "2.9.6", os: "linux x86_64", date: "2026-12-02T00:00Z",
 *   bandwidthGBps: 20, computeTFLOPs: 0.2, computeF16TFLOPs: null, dp4aTOPS: null, probes: [], skipped: [],
 * }));
 * // device: llvmpipe (vendor mesa, fallback adapter); deno 2.9.6, linux x86_64, 2026-12-02T00:00Z
 * // roofline: bandwidth 20.0 GB/s, compute f32 0.200 TFLOP/s; ridge 10.0 FLOP/B
 * ```
 */
export function deviceSummary(device: BenchDevice): string {
  const extra = [
    device.computeF16TFLOPs !== null ? `f16 ${fmt(device.computeF16TFLOPs)} TFLOP/s` : null,
    device.dp4aTOPS !== null ? `dp4a ${fmt(device.dp4aTOPS)} TOPS (8 ops/call)` : null,
  ].filter((s) => s !== null);
  return [
    `device: ${device.description} (vendor ${device.vendor}${device.driver ? `, driver ${device.driver}` : ""}` +
    `${device.isFallbackAdapter ? ", fallback adapter" : ""}); deno ${device.deno}, ${device.os}, ${device.date}`,
    `roofline: bandwidth ${fmt(device.bandwidthGBps)} GB/s, compute f32 ${fmt(device.computeTFLOPs)} TFLOP/s` +
    `${extra.length ? `; ${extra.join(", ")}` : ""}; ridge ${
      fmt((device.computeTFLOPs * 1e3) / device.bandwidthGBps)
    } FLOP/B`,
  ].join("\n");
}

/**
 * The kernel a row timed, as the table and the chart show it: its variant (`kernel`,
 * `kernel.nvidia`, `stats+apply`), preceded by the entry point the case times when the variant is
 * not one of that entry point's (permute's `kernel` case running its `rows` kernel reads
 * `kernel: rows`). The JSON keeps both fields; {@link rowKey} joins them for comparisons.
 *
 * @param row the row's entry point and variant
 * @returns the label
 *
 * @example
 * ```ts
 * import { kernelLabel } from "@xpu/ops/harness/bench";
 * kernelLabel({ entry: "kernel", variant: "kernel.nvidia" }); // "kernel.nvidia"
 * kernelLabel({ entry: "kernel", variant: "rows" }); // "kernel: rows"
 * ```
 */
export function kernelLabel(row: Pick<BenchRow, "entry" | "variant">): string {
  const own = row.variant === row.entry || row.variant.startsWith(`${row.entry}.`);
  return own ? row.variant : `${row.entry}: ${row.variant}`;
}

/**
 * A row as a person reads it: op, kernel ({@link kernelLabel}) and shape.
 *
 * @param row the row
 * @returns e.g. `softmax kernel 8192x8192`
 *
 * @example
 * ```ts
 * import { rowLabel } from "@xpu/ops/harness/bench";
 * rowLabel({ op: "permute", entry: "kernel", variant: "rows", shape: "64x512x2048-perm021" });
 * // "permute kernel: rows 64x512x2048-perm021"
 * ```
 */
export function rowLabel(row: Pick<BenchRow, "op" | "entry" | "variant" | "shape">): string {
  return `${row.op} ${kernelLabel(row)} ${row.shape}`;
}

/**
 * An aligned text table of the rows.
 *
 * @param rows the rows
 * @returns the table (header, rule, one line per row); `*` marks a cache-resident working set
 */
export function formatTable(rows: readonly BenchRow[]): string {
  const header = ["op", "kernel", "shape", "ms", "iqr%", "GB/s", "GFLOP/s", "FLOP/B", "bound", "roofline"];
  const peers = rows.some((r) => r.peer);
  if (peers) header.push("peer ms", "ours/peer");
  const body = rows.map((r) => [
    r.op,
    kernelLabel(r),
    r.shape + (r.cacheResident ? "*" : ""),
    fmt(r.ms),
    r.ms > 0 ? (100 * (r.msQ3 - r.msQ1) / r.ms).toFixed(1) : "-",
    fmt(r.gbps),
    ...flopCells(r),
    r.bound,
    percent(r.fraction),
    ...(peers ? peerCells(r) : []),
  ]);
  const numeric = new Set([3, 4, 5, 6, 7, 9, 10, 11]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (numeric.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

/** The peer's time and our time over it, as table cells; `-` for each without a figure. */
function peerCells(r: BenchRow): [string, string] {
  const ratio = r.vsPeer ?? vsPeer(r.ms, r.peer);
  return [r.peer ? fmt(r.peer.ms) : "-", ratio === null ? "-" : `${fmt(ratio)}x`];
}

// ---------------------------------------------------------------------------------------------
// HTML / SVG

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** `10^e` written plainly: 0.01, 0.1, 1, 10, 100. */
function decade(e: number): string {
  return e < 0 ? (10 ** e).toFixed(-e) : String(10 ** e);
}

/** `10^e` with an SI prefix and a trailing space: "1 G", "100 M", "10 T". */
function siDecade(e: number): string {
  const prefixes = ["", "k", "M", "G", "T", "P", "E"];
  const k = Math.max(0, Math.min(prefixes.length - 1, Math.floor(e / 3)));
  return `${decade(e - 3 * k)} ${prefixes[k]}`;
}

const SVG_STYLE = "text { font: 11px system-ui, sans-serif; fill: #333; } .grid { stroke: #eee; } " +
  ".frame { fill: none; stroke: #999; } .roof { fill: none; stroke: #000; stroke-width: 2; } " +
  ".roofl { font-weight: bold; } .bandwidth circle { fill: #1f77b4; } .compute circle { fill: #d62728; } " +
  ".lead { stroke: #aaa; stroke-width: 0.5; } .note { fill: #666; }";

/**
 * The roofline chart as an SVG element: log-log, x = arithmetic intensity (FLOP/byte), y = FLOP/s,
 * the bandwidth and compute ceilings, and one numbered point per row that has both FLOPs and bytes.
 *
 * @param report the report
 * @returns the `<svg>` markup
 *
 * @example
 * ```ts
 * import { type BenchReport, rooflineSvg, SCHEMA } from "@xpu/ops/harness/bench";
 * const report: BenchReport = {
 *   schema: SCHEMA,
 *   device: {
 *     description: "llvmpipe", vendor: "mesa", architecture: "", driver: null, isFallbackAdapter: true,
 *     target: null, features: ["timestamp-query"], deno: "2.9.6", os: "linux x86_64", date: "2026-12-02T00:00Z",
 *     bandwidthGBps: 20, computeTFLOPs: 0.2, computeF16TFLOPs: null, dp4aTOPS: null, probes: [], skipped: [],
 *   },
 *   conditions: {
 *     method: "median of GPU timestamps", repetitions: 10, warmup: 3, timestamps: "timestamp-query",
 *     date: "2026-12-02T00:00Z", deno: "2.9.6", sizes: "quick", cacheBytes: 50 << 20, regression: "none",
 *   },
 *   results: [{
 *     op: "softmax", entry: "kernel", variant: "kernel", shape: "1024x1024", ms: 0.5, msMin: 0.48, msMax: 0.6,
 *     msQ1: 0.49, msQ3: 0.52, samples: 10, bytes: 8388608, flops: 5242880, gbps: 16.8, tflops: 0.0105,
 *     intensity: 0.625, fraction: 0.84, bound: "bandwidth", sets: 13, cacheResident: false,
 *   }],
 * };
 * const svg = rooflineSvg(report); // "<svg ...>": both rooflines and one point per row
 * ```
 */
export function rooflineSvg(report: BenchReport): string {
  const { bandwidthGBps, computeTFLOPs } = report.device;
  const peak = computeTFLOPs * 1e12, bw = bandwidthGBps * 1e9, ridge = peak / bw;
  const points = report.results
    .map((r, i) => ({ r, i, x: r.intensity, y: r.tflops * 1e12 }))
    .filter((p): p is { r: BenchRow; i: number; x: number; y: number } => p.x !== null && p.x > 0 && p.y > 0);
  const xs = [ridge, ...points.map((p) => p.x)], ys = [peak, ...points.map((p) => p.y)];
  // A clear decade left of the lowest intensity holds the bandwidth label; no point lies above a roof.
  const lx0 = Math.floor(Math.log10(Math.min(...xs) / 10)), lx1 = Math.ceil(Math.log10(Math.max(...xs) * 4));
  const ly0 = Math.floor(Math.log10(Math.min(...ys, bw * 10 ** lx0) / 2)), ly1 = Math.ceil(Math.log10(peak * 1.3));
  const W = 880, H = 540, L = 96, R = 20, T = 20, B = 50;
  const round = (v: number) => Math.round(v * 10) / 10;
  const px = (x: number) => round(L + ((Math.log10(x) - lx0) / (lx1 - lx0)) * (W - L - R));
  const py = (y: number) => round(H - B - ((Math.log10(y) - ly0) / (ly1 - ly0)) * (H - T - B));
  const parts: string[] = [];
  for (let e = lx0; e <= lx1; e++) {
    const x = px(10 ** e);
    parts.push(`<line x1="${x}" y1="${T}" x2="${x}" y2="${H - B}" class="grid"/>`);
    parts.push(`<text x="${x}" y="${H - B + 18}" text-anchor="middle">${decade(e)}</text>`);
  }
  for (let e = ly0; e <= ly1; e++) {
    const y = py(10 ** e);
    parts.push(`<line x1="${L}" y1="${y}" x2="${W - R}" y2="${y}" class="grid"/>`);
    parts.push(`<text x="${L - 6}" y="${y + 4}" text-anchor="end">${siDecade(e)}FLOP/s</text>`);
  }
  const x0 = 10 ** lx0, x1 = 10 ** lx1, xr = Math.min(ridge, x1), xStart = Math.max(x0, 10 ** ly0 / bw);
  const [ax, ay, bx, by] = [px(xStart), py(bw * xStart), px(xr), py(Math.min(bw * xr, peak))];
  parts.push(`<polyline class="roof" points="${ax},${ay} ${bx},${by} ${px(x1)},${py(peak)}"/>`);
  const angle = round((Math.atan2(by - ay, bx - ax) * 180) / Math.PI);
  const [lx, ly] = [round(ax + 0.03 * (bx - ax)), round(ay + 0.03 * (by - ay) - 8)];
  parts.push(
    `<text x="${lx}" y="${ly}" transform="rotate(${angle} ${lx} ${ly})" class="roofl">bandwidth ${
      fmt(bandwidthGBps)
    } GB/s</text>`,
  );
  parts.push(
    `<text x="${px(x1) - 6}" y="${py(peak) - 8}" text-anchor="end" class="roofl">compute f32 ${
      fmt(computeTFLOPs)
    } TFLOP/s (ridge ${fmt(ridge)} FLOP/B)</text>`,
  );
  // Labels go where they overlap no earlier label, no point and neither roof's label: boxes are
  // [left, baseline, width, height]. A label set apart from its point gets a leader line; a point
  // with no free place nearby keeps its number in its tooltip only, so no two labels ever overlap.
  const placed: [number, number, number, number][] = points.map((p) => [px(p.x) - 5, py(p.y) + 5, 10, 10]);
  const computeLabel = `compute f32 ${fmt(computeTFLOPs)} TFLOP/s (ridge ${fmt(ridge)} FLOP/B)`;
  placed.push([px(x1) - 6 - 6.2 * computeLabel.length, py(peak) - 8 + 3, 6.2 * computeLabel.length, 14]);
  let unlabelled = 0;
  for (const p of points) {
    const cx = px(p.x), cy = py(p.y), label = String(p.i + 1);
    const w = 7 * label.length + 2, h = 12;
    const candidates = [[6, -6], [6, 12], [-6 - w, -6], [-6 - w, 12], [-w / 2, -10], [-w / 2, 20]];
    for (let ring = 1; ring <= 2; ring++) {
      const d = ring * 12;
      candidates.push([6 + d, -6 - d], [6 + d, 12 + d], [-6 - w - d, -6 - d], [-6 - w - d, 12 + d]);
    }
    const free = (dx: number, dy: number) =>
      cx + dx >= L && cx + dx + w <= W - R && cy + dy - h >= T && cy + dy <= H - B &&
      placed.every(([x, y, pw, ph]) => cx + dx + w <= x || x + pw <= cx + dx || cy + dy <= y - ph || y <= cy + dy - h);
    const spot = candidates.find(([dx, dy]) => free(dx, dy));
    const title = `${label}. ${rowLabel(p.r)}: ${fmt(p.r.ms)} ms, ${fmt(p.r.gbps)} GB/s, ${
      fmt(p.r.tflops * 1e3)
    } GFLOP/s, ${percent(p.r.fraction)} of ${p.r.bound}${
      p.r.peer ? `; ${p.r.peer.name} ${fmt(p.r.peer.ms)} ms, ours/peer ${peerCells(p.r)[1]}` : ""
    }`;
    let text = "";
    if (spot) {
      const [dx, dy] = spot;
      placed.push([cx + dx, cy + dy, w, h]);
      const far = Math.abs(dx) > 6 + w || Math.abs(dy) > 20;
      const [ex, ey] = [round(cx + dx + (dx < 0 ? w : 0)), round(cy + dy - (dy < 0 ? 0 : h))];
      text = (far ? `<line x1="${cx}" y1="${cy}" x2="${ex}" y2="${ey}" class="lead"/>` : "") +
        `<text x="${round(cx + dx)}" y="${round(cy + dy)}">${label}</text>`;
    } else unlabelled++;
    parts.push(
      `<g class="${p.r.bound}"><title>${escapeHtml(title)}</title><circle cx="${cx}" cy="${cy}" r="4"/>${text}</g>`,
    );
  }
  if (unlabelled > 0) {
    parts.push(
      `<text x="${L + 8}" y="${T + 16}" class="note">${unlabelled} point(s) too crowded to number: ` +
        `hover a point for its row</text>`,
    );
  }
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 10}" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>`);
  parts.push(
    `<text x="14" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(T + H - B) / 2})">` +
      `performance (FLOP/s)</text>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" ` +
    `aria-label="roofline chart">\n<style>${SVG_STYLE}</style>\n<rect x="${L}" y="${T}" width="${W - L - R}" height="${
      H - T - B
    }" class="frame"/>\n` +
    parts.join("\n") + "\n</svg>";
}

/** The HTML paragraph on the peer: who, how timed, what the ratio means, and the rows without one. */
function peerParagraph(report: BenchReport): string {
  const c = report.conditions;
  const withPeer = report.results.filter((r) => r.peer);
  if (!withPeer.length) return c.peer ? `<p class="small">Peer: ${escapeHtml(c.peer)}</p>` : "";
  const names = [...new Set(withPeer.map((r) => r.peer!.name))].join(", ");
  const without = report.results.length - withPeer.length;
  return `<p>Peer: <b>${escapeHtml(names)}</b> on the same device and shapes, in this run; "ours/peer" is our median ` +
    `time over the peer's (below 1: ours is faster). ${withPeer.length} of ${report.results.length} rows have a ` +
    `peer figure${without ? `; the others have no counterpart (hover a peer cell for the reason)` : ""}.</p>\n` +
    (c.peer ? `<p class="small">${escapeHtml(c.peer)}</p>` : "");
}

/**
 * A self-contained HTML page (inline CSS and SVG, no scripts, no network): the device and its
 * ceilings, the conditions, the roofline chart and the numbered table of rows.
 *
 * @param report the report
 * @returns the HTML text
 *
 * @example
 * ```ts
 * import { type BenchReport, reportHtml, SCHEMA } from "@xpu/ops/harness/bench";
 * const report: BenchReport = {
 *   schema: SCHEMA,
 *   device: {
 *     description: "llvmpipe", vendor: "mesa", architecture: "", driver: null, isFallbackAdapter: true,
 *     target: null, features: ["timestamp-query"], deno: "2.9.6", os: "linux x86_64", date: "2026-12-02T00:00Z",
 *     bandwidthGBps: 20, computeTFLOPs: 0.2, computeF16TFLOPs: null, dp4aTOPS: null, probes: [], skipped: [],
 *   },
 *   conditions: {
 *     method: "median of GPU timestamps", repetitions: 10, warmup: 3, timestamps: "timestamp-query",
 *     date: "2026-12-02T00:00Z", deno: "2.9.6", sizes: "quick", cacheBytes: 50 << 20, regression: "none",
 *   },
 *   results: [{
 *     op: "softmax", entry: "kernel", variant: "kernel", shape: "1024x1024", ms: 0.5, msMin: 0.48, msMax: 0.6,
 *     msQ1: 0.49, msQ3: 0.52, samples: 10, bytes: 8388608, flops: 5242880, gbps: 16.8, tflops: 0.0105,
 *     intensity: 0.625, fraction: 0.84, bound: "bandwidth", sets: 13, cacheResident: false,
 *   }],
 * };
 * const html = reportHtml(report); // a standalone page: device, conditions, the roofline chart, the table
 * ```
 */
export function reportHtml(report: BenchReport): string {
  const d = report.device, c = report.conditions;
  const peers = report.results.some((r) => r.peer);
  const peerTd = (r: BenchRow) => {
    if (!peers) return "";
    const [ms, ratio] = peerCells(r);
    const title = r.peer ? `${r.peer.name}: ${r.peer.call}, ${r.peer.kernels} kernel(s)` : r.peerNote ?? "";
    return `<td title="${escapeHtml(title)}">${ms}</td><td>${ratio}</td>`;
  };
  const rows = report.results.map((r, i) =>
    `<tr class="${r.bound}"><td>${i + 1}</td><td>${escapeHtml(r.op)}</td><td>${escapeHtml(kernelLabel(r))}</td><td>${
      escapeHtml(r.shape)
    }${r.cacheResident ? "*" : ""}</td><td>${fmt(r.ms)}</td><td>${fmt(r.gbps)}</td><td>${
      flopCells(r).join("</td><td>")
    }</td><td>${r.bound}</td><td>${percent(r.fraction)}</td>${peerTd(r)}</tr>`
  ).join("\n");
  const probes = d.probes.map((p) =>
    `<tr><td>${p.probe}</td><td>${escapeHtml(p.kernel)}</td><td>${fmt(p.figure)} ${p.unit}</td><td>${
      fmt(p.ms)
    }</td></tr>`
  ).join("\n");
  const offChart = report.results.filter((r) => !(r.intensity !== null && r.intensity > 0 && r.tflops > 0)).length;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>@xpu/ops roofline: ${escapeHtml(d.description)}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
table { border-collapse: collapse; margin: 12px 0; } td, th { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: right; }
td:nth-child(-n+4), th:nth-child(-n+4) { text-align: left; }
.small { color: #666; }
</style></head><body>
<h1>Roofline: ${escapeHtml(d.description)}</h1>
<p>vendor ${escapeHtml(d.vendor)}${d.driver ? `, driver ${escapeHtml(d.driver)}` : ""}${
    d.isFallbackAdapter ? ", fallback (software) adapter" : ""
  }; deno ${escapeHtml(d.deno)}, ${escapeHtml(d.os)}; ${escapeHtml(d.date)}</p>
<p>Ceilings measured in this run: bandwidth <b>${fmt(d.bandwidthGBps)} GB/s</b>, compute f32 <b>${
    fmt(d.computeTFLOPs)
  } TFLOP/s</b>${d.computeF16TFLOPs !== null ? `, f16 ${fmt(d.computeF16TFLOPs)} TFLOP/s` : ""}${
    d.dp4aTOPS !== null ? `, DP4a ${fmt(d.dp4aTOPS)} TOPS (8 ops per dot4I8Packed)` : ""
  }.</p>
<p class="small">${escapeHtml(c.method)} ${
    escapeHtml(c.timestamps)
  }. ${c.repetitions} timed passes after ${c.warmup} warm-up; sizes "${c.sizes}".</p>
${rooflineSvg(report)}
<p class="small">Blue: bandwidth-bound; red: compute-bound. ${
    offChart
      ? `${offChart} row(s) with no FLOPs or no bytes cannot be placed on a log-log chart; they are in the table.`
      : ""
  } * = the rotated inputs fit in the assumed cache (${
    fmt(c.cacheBytes / 2 ** 20)
  } MiB): the figure may be cache-served.</p>
${peerParagraph(report)}
<table><tr><th>#</th><th>op</th><th>kernel</th><th>shape</th><th>ms</th><th>GB/s</th><th>GFLOP/s</th><th>FLOP/B</th><th>bound</th><th>roofline</th>${
    peers ? "<th>peer ms</th><th>ours/peer</th>" : ""
  }</tr>
${rows}
</table>
<h2>Probes</h2>
<table><tr><th>probe</th><th>kernel</th><th>figure</th><th>ms</th></tr>
${probes}
</table>
${d.skipped.length ? `<p class="small">Not run: ${d.skipped.map(escapeHtml).join("; ")}</p>` : ""}
</body></html>
`;
}
