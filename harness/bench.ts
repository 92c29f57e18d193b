/**
 * The benchmark CLI (Deno-only: reads arguments, writes files). `deno task bench` runs
 * `deno run -A ops/bench.ts`, which calls {@link benchMain} with every op's cases. The run itself
 * (plans, probes, timings, the report) is `harness/bench_run.ts`, which a browser page runs too
 * (`examples/roofline/`); this file adds the arguments, the peer, the printed table and the files:
 *
 * 1. acquires the adapter the machine has (a software one included) and refuses to report any
 *    time without `timestamp-query`;
 * 2. measures the roofline (`harness/roofline.ts`): bandwidth and f32 compute, f16 and DP4a where
 *    available, each kernel known-answer checked first;
 * 3. times every case it is given (`ops/bench.ts` gives every op's, from `ops/registry.ts`) at its shapes (the `gpu` list, or the `quick`
 *    list on a fallback adapter or with `--quick`) and derives GB/s, TFLOP/s, the bound and the
 *    fraction of its roofline;
 * 4. with the peer on (the default when `harness/peer/npm/node_modules` holds TF.js; `--peer` insists,
 *    `--no-peer` turns it off), times TF.js's WebGPU backend on the same device at each shape that
 *    `harness/peer/bench_map.ts` maps to a TF.js op, after all of our own figures are taken, and
 *    adds its time (`peer`) and ours over it (`vsPeer`) to the row; a shape with no counterpart,
 *    or a peer that fails, is reported and leaves `peer` null, never failing the bench;
 * 5. prints a table, writes the JSON result and a self-contained HTML/SVG roofline chart
 *    (default `.bench/<adapter>.json` and `.html`), and with `--compare PATH` flags every row whose
 *    fraction dropped beyond the noise threshold, exiting 1 if any did.
 *
 * `deno task roofline [--sweep]` (harness/roofline_cli.ts) runs {@link rooflineMain}: the probes alone, or the
 * sweep over every kernel config, printing each config's figure.
 *
 * Exit codes: 0 fine, 1 regression(s), 2 no timing possible, a failed case, or any other error.
 *
 * @module
 */

import { parseArgs, type ParseArgsConfig } from "node:util";
import { acquireDevice, type ResidentDevice } from "./device.ts";
import type { BenchCase, SizeClass } from "./bench_case.ts";
import { type BenchProgress, type BenchRun, type BenchRunOptions, NoBenchJobError, runBench } from "./bench_run.ts";
import {
  type BenchReport,
  compareReports,
  deviceSummary,
  fmt,
  formatComparison,
  formatTable,
  parseReport,
  type PeerFigure,
  percent,
  reportHtml,
  reportJson,
  rowLabel,
  vsPeer,
} from "./report.ts";
import { measureRoofline, type ProbeOptions, type ProbeResult, sweepConfigs } from "./roofline.ts";
import { bandwidthName, dp4aName, fmaName } from "./roofline.wgsl.ts";
import { probeAdapter, probeBandwidth, probeDp4a, probeFma } from "./roofline.ts";
import { supportsTimestamps, TimestampUnavailableError, warmClocks } from "./timing.ts";
import { describeCall, peerFor } from "./peer/bench_map.ts";
import { createTfjsPeer, missingTfjsFile, type TfjsPeer } from "./peer/tfjs.ts";

const USAGE = `deno task bench [options]     (deno run -A ops/bench.ts)
  --filter TEXT       only rows whose op/entry/variant/shape contains TEXT (repeatable: any of them)
  --quick             the short shape list and small probes (automatic on a fallback adapter)
  --json PATH         result file (default .bench/<adapter>.json); the chart goes beside it as .html
  --compare PATH      compare with a saved result; exit 1 on any regression
  --threshold X       absolute floor of the regression threshold, fraction units (default 0.05)
  --spread-factor K   multiple of the measured spread in the threshold (default 3)
  --samples N         timed passes per figure, >= 5 (default 10)
  --warmup N          untimed passes before them (default 3)
  --l2-mib N          cache size the input rotation defeats, MiB (default 50, the H200's L2;
                      0 turns rotation off: one input set, passes serialised by their dependency)
  --all-variants      time every variant of each entry point, not only the one resolved here
  --driver TEXT       driver string to record when the runtime exposes none (e.g. from nvidia-smi)
  --peer              time TF.js's WebGPU backend beside each case it has a counterpart for (the
                      default when harness/peer/npm/node_modules is installed; with --peer, its
                      absence is an error)
  --no-peer           do not run the peer
  --peer-all          time the peer at every shape (default: each case's last, largest, shape)
  --help`;

const ROOFLINE_USAGE = `deno task roofline [options]     (deno run -A harness/roofline_cli.ts)
  (no option)         measure the default probes and print the ceilings
  --sweep             measure every config of the sweep grid, print each figure and the best
  --only LIST         with --sweep: comma-separated subset of bandwidth,f32,f16,dp4a
  --small             fewer configs, shorter passes (automatic on a fallback adapter)
  --threads N         threads per compute probe (default 2^23; 2^12 on a fallback adapter)
  --target-ms X       pass time the compute probes calibrate to (default 5; small 2; fallback 20)
  --bytes N           bytes per bandwidth buffer (default 1 GiB, clamped to the limits; small 256 MiB;
                      fallback 32 MiB)
  --samples N         timed passes per figure (default 10)
  --json PATH         also write every probe result as JSON
  --driver TEXT       driver string to print when the runtime exposes none
  --help`;

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "adapter";
}

function denoVersion(): string {
  return Deno.version.deno;
}

function intArg(value: string | undefined, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer >= ${min}, got ${value}`);
  return n;
}

function numArg(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`--${name} must be a non-negative number, got ${value}`);
  return n;
}

async function deviceWithTimestamps(): Promise<ResidentDevice | null> {
  const gpu = await acquireDevice();
  if (!supportsTimestamps(gpu)) {
    console.error(
      `${gpu.adapter.description}: this adapter does not offer timestamp-query, so no GPU time can be ` +
        `reported; the wall clock is not used instead (it would measure Deno's ~11 ms fence).`,
    );
    gpu.destroy();
    return null;
  }
  return gpu;
}

/** Prints one step of a run as the CLI always has: skips and rows to stdout, failures to stderr. */
function printProgress(event: BenchProgress): void {
  switch (event.kind) {
    case "skip":
      return console.log(`  skip ${event.where}: ${event.reason}`);
    case "probes":
      return console.log("roofline probes (each kernel known-answer checked first):");
    case "probe":
      return console.log(probeLine(event.result));
    case "probes-skipped":
      return console.log(`  skipped ${event.reason}`);
    case "row":
      return console.log(
        `  ${rowLabel(event.row)}: ${event.row.ms.toPrecision(4)} ms, ${percent(event.row.fraction)} of ` +
          `${event.row.bound}`,
      );
    case "failed":
      return console.error(`  FAILED ${event.key.replaceAll("/", " ")}: ${event.message}`);
  }
}

function probeLine(p: ProbeResult): string {
  return `  ${p.probe.padEnd(10)} ${p.kernel.padEnd(28)} ${fmt(p.figure).padStart(8)} ${p.unit.padEnd(7)} ` +
    `median ${fmt(p.ms)} ms [${fmt(p.msMin)}, ${fmt(p.msMax)}] of ${p.samples}`;
}

/**
 * Runs the benchmark CLI over `cases` (the ops' registry, `ops/registry.ts`, gives every op's).
 *
 * @param args command-line arguments (see `--help`)
 * @param cases the bench cases to run
 * @returns the exit code: 0 fine, 1 regression(s), 2 no timing possible, a failed case, or a
 *   `--filter` that matches no case
 * @throws Error naming the file when `--compare`'s file is not a result (empty, not JSON, no rows, a
 *   negative fraction), or on a bad option
 */
export async function benchMain(args: string[], cases: readonly BenchCase[]): Promise<number> {
  const { values } = cliArgs({
    args,
    options: {
      filter: { type: "string", multiple: true },
      quick: { type: "boolean" },
      json: { type: "string" },
      compare: { type: "string" },
      threshold: { type: "string" },
      "spread-factor": { type: "string" },
      samples: { type: "string" },
      warmup: { type: "string" },
      "l2-mib": { type: "string" },
      "all-variants": { type: "boolean" },
      driver: { type: "string" },
      peer: { type: "boolean" },
      "no-peer": { type: "boolean" },
      "peer-all": { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.peer && values["no-peer"]) throw new UsageError("--peer and --no-peer contradict each other");
  const peerMissing = values["no-peer"] ? undefined : await missingTfjsFile();
  if (values.peer && peerMissing) {
    console.error(`--peer: ${peerMissing} is missing; run \`deno task peer:install\` (harness/peer/README.md)`);
    return 2;
  }
  const samples = intArg(values.samples, "samples", 10, 5);
  const warmup = intArg(values.warmup, "warmup", 3, 0);
  const cacheBytes = numArg(values["l2-mib"], "l2-mib", 50) * 2 ** 20;
  const compareOptions = {
    absolute: numArg(values.threshold, "threshold", 0.05),
    spreadFactor: numArg(values["spread-factor"], "spread-factor", 3),
  };
  const baseline = values.compare ? await readBaseline(values.compare) : null;

  const gpu = await deviceWithTimestamps();
  if (!gpu) return 2;
  let peer: TfjsPeer | undefined;
  try {
    const sizes: SizeClass = values.quick || gpu.adapter.isFallbackAdapter ? "quick" : "gpu";
    const timing = { samples, warmup, cacheBytes };
    console.log(
      `adapter: ${gpu.adapter.description}${gpu.adapter.isFallbackAdapter ? " (fallback)" : ""}; sizes: ${sizes}`,
    );
    const filters = values.filter ?? [];
    const options: BenchRunOptions = {
      sizes,
      ...timing,
      filters,
      allVariants: values["all-variants"],
      runtime: denoVersion(),
      os: `${Deno.build.os} ${Deno.build.arch}`,
      driver: values.driver ? `${values.driver} (given with --driver)` : undefined,
      compare: compareOptions,
      onProgress: printProgress,
    };
    // Every plan is built (cheap: no GPU work) and filtered before any probe runs, so a filter that
    // matches nothing fails at once instead of after the probes.
    let run: BenchRun;
    try {
      run = await runBench(gpu, cases, options);
    } catch (e) {
      if (!(e instanceof NoBenchJobError)) throw e;
      console.error(
        filters.length
          ? `--filter ${filters.map((f) => `"${f}"`).join(" --filter ")}: no case matches (keys are ` +
            `op/entry/variant/shape, e.g. ${e.example ? `"${e.example}"` : "none: no cases were given"})`
          : e.message,
      );
      return 2;
    }
    const { report, timed, failures } = run;
    const rows = report.results;
    const peerFigures = new Map<string, PeerOutcome>();
    const noPeer = new Map<string, string[]>();
    const measured = rows.map((row, i) => ({
      row,
      op: timed[i].case.op,
      entry: timed[i].case.entry,
      value: timed[i].shape.value,
      largest: timed[i].shape === timed[i].case.shapes[sizes].at(-1),
    }));

    // The peer runs after every figure of ours is taken, so that TF.js's backend (its buffer pool,
    // its pipelines) is never alive on the device while our figures are taken.
    let peerCondition: string;
    if (values["no-peer"]) peerCondition = "off (--no-peer)";
    else if (peerMissing) peerCondition = `off (${peerMissing} is missing; deno task peer:install)`;
    else {
      try {
        peer = await createTfjsPeer(gpu.device);
        peerCondition = `${peerName(peer)}, on the same device, after all of our own figures, at ` +
          `${values["peer-all"] ? "every shape" : "each case's largest shape"}: ${peer.method}; bench cases map to ` +
          `its ops in harness/peer/bench_map.ts`;
      } catch (e) {
        if (values.peer || e instanceof TimestampUnavailableError) throw e;
        peerCondition = `off (it did not start: ${e instanceof Error ? e.message : String(e)})`;
      }
    }
    console.log(`peer: ${peer ? `${peerName(peer)} (--no-peer turns it off)` : peerCondition}`);
    for (const { row, op, entry, value, largest } of measured) {
      if (peer && !largest && !values["peer-all"]) {
        row.peerNote = "not timed: the peer runs at each case's largest shape (--peer-all for every shape)";
        continue;
      }
      const beside = peer ? await peerFigure(gpu, peer, op, entry, value, timing, peerFigures) : null;
      if (beside?.note && !beside.failed) {
        noPeer.set(beside.note, [...noPeer.get(beside.note) ?? [], `${op}/${entry}/${row.shape}`]);
      }
      row.peer = beside?.figure ?? null;
      row.vsPeer = vsPeer(row.ms, row.peer);
      if (beside?.note) row.peerNote = beside.note;
    }

    for (const [reason, where] of noPeer) {
      const unique = [...new Set(where)];
      console.log(`  no peer figure for ${unique.join(", ")}: ${reason}`);
    }

    report.conditions.peer = peerCondition;
    const device = report.device;
    console.log("");
    console.log(deviceSummary(device));
    console.log("");
    console.log(formatTable(rows));
    if (rows.some((r) => r.cacheResident)) {
      console.log("* the rotated inputs fit in the assumed cache: the figure may be cache-served");
    }
    if (rows.some((r) => r.fraction > 1)) {
      console.log("note: a fraction above 100% means a cache served the data or the probe is not yet a ceiling");
    }

    const jsonPath = values.json ?? `.bench/${slug(device.description)}.json`;
    const htmlPath = jsonPath.endsWith(".json") ? `${jsonPath.slice(0, -5)}.html` : `${jsonPath}.html`;
    const dir = jsonPath.includes("/") ? jsonPath.slice(0, jsonPath.lastIndexOf("/")) : ".";
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(jsonPath, reportJson(report));
    await Deno.writeTextFile(htmlPath, reportHtml(report));
    console.log(`\nwrote ${jsonPath} and ${htmlPath}`);

    let code = failures ? 2 : 0;
    if (baseline) {
      console.log("");
      if (baseline.device.description !== device.description) {
        console.log(
          `note: the saved result is from "${baseline.device.description}"; fractions are compared as they are`,
        );
      }
      const comparison = compareReports(baseline, report, compareOptions);
      console.log(formatComparison(comparison));
      if (comparison.regressions.length) code = Math.max(code, 1);
    }
    if (failures) console.error(`${failures} case(s) failed`);
    return code;
  } catch (e) {
    if (e instanceof TimestampUnavailableError) {
      console.error(e.message);
      return 2;
    }
    throw e;
  } finally {
    peer?.dispose();
    gpu.destroy();
  }
}

function peerName(peer: TfjsPeer): string {
  return `tfjs-webgpu ${peer.version}`;
}

/** The peer at one shape: its figure, or why there is none (`failed` when it ran and failed). */
type PeerOutcome = { figure: PeerFigure; note?: undefined; failed?: undefined } | {
  figure?: undefined;
  note: string;
  failed: boolean;
};

/**
 * The peer's figure for a bench case at one shape, or why there is none: no counterpart, or the
 * peer failed (printed at once, never fatal). Figures are cached by call, so `--all-variants`
 * times each shape once.
 */
async function peerFigure(
  gpu: ResidentDevice,
  peer: TfjsPeer,
  op: string,
  entry: string,
  shape: unknown,
  timing: { samples: number; warmup: number; cacheBytes: number },
  cache: Map<string, PeerOutcome>,
): Promise<PeerOutcome> {
  const lookup = peerFor(op, entry, shape);
  if (!lookup.call) return { note: lookup.reason, failed: false };
  const call = describeCall(lookup.call);
  const cached = cache.get(call);
  if (cached) return cached;
  let out: PeerOutcome;
  try {
    // The clocks are warmed before every peer figure, as before ours.
    const beforeTiming = () => warmClocks(gpu);
    const t = await peer.time(lookup.call.op, lookup.call.args, { ...timing, beforeTiming });
    out = t
      ? { figure: { name: peerName(peer), call, ms: t.ms, kernels: t.kernels } }
      : { note: `${peerName(peer)} has no op ${lookup.call.op}`, failed: false };
  } catch (e) {
    out = { note: `${peerName(peer)} failed on ${call}: ${e instanceof Error ? e.message : String(e)}`, failed: true };
    console.error(`  peer: ${out.note}`);
  }
  cache.set(call, out);
  return out;
}

/**
 * Runs the roofline CLI: the default probes, or with `--sweep` every config of the sweep grid
 * (each printed as it is measured, failures included), then the best per probe.
 *
 * @param args command-line arguments (see `--help`)
 * @returns the exit code: 0 fine, 2 no timing possible or no figure
 */
export async function rooflineMain(args: string[]): Promise<number> {
  const { values } = cliArgs({
    args,
    options: {
      sweep: { type: "boolean" },
      only: { type: "string" },
      small: { type: "boolean" },
      threads: { type: "string" },
      "target-ms": { type: "string" },
      bytes: { type: "string" },
      samples: { type: "string" },
      json: { type: "string" },
      driver: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(ROOFLINE_USAGE);
    return 0;
  }
  // The options are checked before the device is asked for.
  const sizes = {
    samples: intArg(values.samples, "samples", 10, 5),
    threads: values.threads ? intArg(values.threads, "threads", 0, 32) : undefined,
    targetMs: values["target-ms"] ? numArg(values["target-ms"], "target-ms", 5) : undefined,
    bandwidthBytes: values.bytes ? intArg(values.bytes, "bytes", 0, 16) : undefined,
  };
  const probes = ["bandwidth", "f32", "f16", "dp4a"];
  const only = new Set((values.only ?? probes.join(",")).split(","));
  const unknown = [...only].find((p) => !probes.includes(p));
  if (unknown !== undefined) throw new UsageError(`--only: "${unknown}" is not one of ${probes.join(", ")}`);
  const gpu = await deviceWithTimestamps();
  if (!gpu) return 2;
  try {
    const size = values.small || gpu.adapter.isFallbackAdapter ? "small" : "full";
    const options: ProbeOptions = { size, ...sizes };
    const driver = probeAdapter(gpu).driver ??
      (values.driver ? `${values.driver} (given with --driver)` : "not exposed");
    console.log(
      `adapter: ${gpu.adapter.description} (vendor ${gpu.adapter.vendor}, driver ${driver}); deno ${denoVersion()}; ` +
        `f16 verified: ${gpu.f16Verified}; ${new Date().toISOString()}; sizes: ${size}`,
    );
    const results: ProbeResult[] = [];
    const failures: string[] = [];
    if (!values.sweep) {
      const r = await measureRoofline(gpu, { ...options, onResult: (p) => console.log(probeLine(p)) });
      results.push(...r.probes);
      failures.push(...r.skipped);
    } else {
      const grid = sweepConfigs(size);
      const jobs: [string, () => Promise<ProbeResult>][] = [];
      if (only.has("bandwidth")) {
        for (const c of grid.bandwidth) jobs.push([bandwidthName(c), () => probeBandwidth(gpu, c, options)]);
      }
      if (only.has("f32")) { for (const c of grid.fma) jobs.push([fmaName(c), () => probeFma(gpu, c, options)]); }
      if (only.has("f16")) {
        if (gpu.f16Verified) { for (const c of grid.fmaF16) jobs.push([fmaName(c), () => probeFma(gpu, c, options)]); }
        else failures.push("f16: not verified on this device");
      }
      if (only.has("dp4a")) { for (const c of grid.dp4a) jobs.push([dp4aName(c), () => probeDp4a(gpu, c, options)]); }
      console.log(`sweep: ${jobs.length} configs`);
      for (const [name, job] of jobs) {
        try {
          const r = await job();
          results.push(r);
          console.log(probeLine(r));
        } catch (e) {
          if (e instanceof TimestampUnavailableError) throw e;
          const message = `${name}: ${e instanceof Error ? e.message : String(e)}`;
          failures.push(message);
          console.log(`  FAILED ${message}`);
        }
      }
    }
    console.log("\nbest per probe:");
    for (const probe of ["bandwidth", "compute", "computeF16", "dp4a"]) {
      const of = results.filter((r) => r.probe === probe).sort((a, b) => b.figure - a.figure);
      if (of.length) console.log(probeLine(of[0]));
    }
    for (const f of failures) console.log(`  not measured: ${f}`);
    if (values.json) {
      await Deno.writeTextFile(values.json, JSON.stringify({ results, failures }, null, 2) + "\n");
      console.log(`wrote ${values.json}`);
    }
    return results.length ? 0 : 2;
  } catch (e) {
    if (e instanceof TimestampUnavailableError) {
      console.error(e.message);
      return 2;
    }
    throw e;
  } finally {
    gpu.destroy();
  }
}

/** A command line the CLI cannot take: printed as its message alone, without a stack. */
class UsageError extends Error {}

/** The result `--compare` names, a missing or malformed file refused as a {@link UsageError}. */
async function readBaseline(path: string): Promise<BenchReport> {
  try {
    return parseReport(await Deno.readTextFile(path), path);
  } catch (e) {
    throw new UsageError(`--compare: ${(e as Error).message}`);
  }
}

/**
 * `parseArgs` of node:util, its refusals (an unknown option, a missing value) as a {@link UsageError}
 * that says where the options are listed, instead of node's TypeError printed with its stack.
 */
function cliArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (e) {
    throw new UsageError(`${(e as Error).message} (--help lists the options)`);
  }
}

/**
 * Runs a CLI entry point and exits with its code; an unexpected error is printed and exits 2,
 * never 1 (1 means a regression).
 *
 * @param main the entry point
 * @param args its arguments
 * @returns never: the process exits
 */
export async function exitWith(main: (args: string[]) => Promise<number>, args: string[]): Promise<never> {
  let code: number;
  try {
    code = await main(args);
  } catch (e) {
    console.error(e instanceof UsageError ? e.message : e);
    code = 2;
  }
  Deno.exit(code);
}
