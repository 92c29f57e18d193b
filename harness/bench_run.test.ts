// One bench run, as a page runs it: the report it assembles, the order of its progress, and a filter
// that matches nothing refused before any GPU work. The case is defined here (harness/ imports no op).
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { type BenchProgress, type BenchRunOptions, NoBenchJobError, runBench } from "./bench_run.ts";
import { type BenchCase, defineCase } from "./bench_case.ts";
import { LimitError } from "./limits.ts";
import { parseReport, reportJson, rooflineSvg, SCHEMA } from "./report.ts";
import { assertThrowsMessage, DOUBLE_WGSL, doublePlan, gpuTest } from "./testing.ts";

/** Doubles n floats; a shape of 0 stands for one the device's limits refuse. */
const CASES: readonly BenchCase[] = [defineCase<number>({
  op: "double",
  entry: "kernel",
  sources: { kernel: DOUBLE_WGSL },
  gpu: [1 << 20],
  quick: [0, 256, 1 << 14],
  label: (n) => `${n}`,
  plan: (_gpu, n) => {
    if (n === 0) {
      throw new LimitError("double/kernel", "maxComputeWorkgroupsPerDimension", 1e9, 65535, "workgroups in x");
    }
    return doublePlan(n);
  },
  inputs: (n, seed) => [Float32Array.from({ length: n }, (_, i) => seed + i + 0.5)],
})];

const OPTIONS: BenchRunOptions = {
  sizes: "quick",
  samples: 5,
  warmup: 1,
  cacheBytes: 0,
  runtime: "browser: TestAgent/1.0",
  os: "TestOS x1",
};

gpuTest("runBench: the report deno task bench writes, with the runtime given, progress in order", async (gpu) => {
  const events: BenchProgress[] = [];
  const { report, timed, failures } = await runBench(gpu, CASES, { ...OPTIONS, onProgress: (e) => events.push(e) });
  strictEqual(failures, 0);
  strictEqual(report.schema, SCHEMA);
  deepStrictEqual([report.device.deno, report.device.os, report.conditions.deno], [
    "browser: TestAgent/1.0",
    "TestOS x1",
    "browser: TestAgent/1.0",
  ]);
  deepStrictEqual([report.conditions.repetitions, report.conditions.warmup, report.conditions.sizes], [5, 1, "quick"]);
  strictEqual(report.conditions.peer, undefined);
  // The refused shape is skipped, the others timed in order.
  deepStrictEqual(report.results.map((r) => r.shape), ["256", "16384"]);
  deepStrictEqual(timed.map((j) => j.key), ["double/kernel/kernel/256", "double/kernel/kernel/16384"]);
  for (const r of report.results) {
    ok(r.ms > 0 && r.fraction > 0, JSON.stringify(r));
    strictEqual(r.bytes, 8 * Number(r.shape));
    deepStrictEqual([r.peer, r.vsPeer], [null, null]);
  }
  ok(report.device.bandwidthGBps > 0 && report.device.computeTFLOPs > 0);
  strictEqual(report.device.probes.length > 0, true);
  // The saved file reads back, and the chart has a point per row.
  deepStrictEqual(parseReport(reportJson(report), "round trip"), JSON.parse(reportJson(report)));
  strictEqual(rooflineSvg(report).match(/<circle /g)?.length, 2);

  const kinds = events.map((e) => e.kind).filter((k, i, all) => k !== all[i - 1]);
  deepStrictEqual(kinds.filter((k) => k !== "probes-skipped"), ["skip", "probes", "probe", "row"]);
  const rows = events.filter((e) => e.kind === "row");
  deepStrictEqual(rows.map((e) => [e.done, e.total]), [[1, 2], [2, 2]]);
});

gpuTest("runBench: a filter that matches nothing is refused before any probe runs", async (gpu) => {
  const events: BenchProgress[] = [];
  await assertThrowsMessage(
    () => runBench(gpu, CASES, { ...OPTIONS, filters: ["no-such-op"], onProgress: (e) => events.push(e) }),
    'filter "no-such-op": no case matches (keys are op/entry/variant/shape, e.g. "double/kernel")',
  );
  ok(events.every((e) => e.kind === "skip"), JSON.stringify(events));
  await runBench(gpu, [], OPTIONS).then(
    () => {
      throw new Error("an empty case list ran");
    },
    (e) => ok(e instanceof NoBenchJobError && e.message === "no bench case to run", String(e)),
  );
});
