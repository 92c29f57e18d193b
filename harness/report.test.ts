import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage } from "./testing.ts";
import {
  type BenchReport,
  type BenchRow,
  compareReports,
  formatComparison,
  formatTable,
  fractionSpread,
  kernelLabel,
  parseReport,
  type PeerFigure,
  reportHtml,
  reportJson,
  rowFigures,
  SCHEMA,
  vsPeer,
} from "./report.ts";

function row(over: Partial<BenchRow> = {}): BenchRow {
  return {
    op: "elementwise",
    entry: "kernel",
    variant: "kernel",
    shape: "67108864",
    ms: 1,
    msMin: 0.98,
    msMax: 1.05,
    msQ1: 0.99,
    msQ3: 1.01,
    samples: 10,
    bytes: 805306368,
    flops: 67108864,
    gbps: 805.306368,
    tflops: 0.067108864,
    intensity: 1 / 12,
    fraction: 0.8,
    bound: "bandwidth",
    sets: 1,
    cacheResident: false,
    ...over,
  };
}

function report(rows: BenchRow[]): BenchReport {
  return {
    schema: SCHEMA,
    device: {
      description: "Imaginary GPU",
      vendor: "4318",
      architecture: "",
      driver: null,
      isFallbackAdapter: false,
      target: "nvidia",
      features: ["timestamp-query"],
      deno: "2.9.6",
      os: "linux x86_64",
      date: "2026-01-01T00:00:00.000Z",
      bandwidthGBps: 1000,
      computeTFLOPs: 50,
      computeF16TFLOPs: null,
      dp4aTOPS: null,
      probes: [],
      skipped: [],
    },
    conditions: {
      method: "m",
      repetitions: 10,
      warmup: 3,
      timestamps: "t",
      date: "2026-01-01T00:00:00.000Z",
      deno: "2.9.6",
      sizes: "gpu",
      cacheBytes: 50 * 2 ** 20,
      regression: "r",
    },
    results: rows,
  };
}

const REQUIRED_DEVICE = ["description", "vendor", "driver", "deno", "date", "bandwidthGBps", "computeTFLOPs"];
const REQUIRED_ROW = ["op", "entry", "variant", "shape", "ms", "gbps", "tflops", "fraction", "bound"];

function assertFieldNames(data: Record<string, unknown>): void {
  for (const key of ["device", "conditions", "results"]) ok(key in data, `top-level "${key}"`);
  const device = data.device as Record<string, unknown>;
  for (const key of REQUIRED_DEVICE) ok(key in device, `device.${key}`);
  const conditions = data.conditions as Record<string, unknown>;
  for (const key of ["method", "repetitions", "warmup", "timestamps", "date", "deno"]) {
    ok(key in conditions, `conditions.${key}`);
  }
  for (const r of data.results as Record<string, unknown>[]) {
    for (const key of REQUIRED_ROW) ok(key in r, `results[].${key}`);
    ok(r.bound === "bandwidth" || r.bound === "compute");
    ok(typeof r.shape === "string");
  }
}

Deno.test("rowFigures: bandwidth below the ridge point, compute at or above it", () => {
  const ceilings = { bandwidthGBps: 2000, computeTFLOPs: 50 }; // ridge 25 FLOP/B
  const low = rowFigures({ bytes: 1e9, flops: 2.5e8 }, 1, ceilings);
  deepStrictEqual(low, { gbps: 1000, tflops: 0.25, intensity: 0.25, bound: "bandwidth", fraction: 0.5 });
  const high = rowFigures({ bytes: 1e6, flops: 25e6 }, 0.001, ceilings);
  strictEqual(high.bound, "compute");
  strictEqual(high.fraction, 25e6 / 1e-6 / 1e12 / 50);
  const noBytes = rowFigures({ bytes: 0, flops: 1e9 }, 1, ceilings);
  strictEqual(noBytes.intensity, null);
  strictEqual(noBytes.bound, "compute");
  strictEqual(rowFigures({ bytes: 1e9, flops: 0 }, 1, ceilings).bound, "bandwidth");
});

Deno.test("report JSON has the exact field names other tools read", () => {
  const text = reportJson(report([row()]));
  const data = JSON.parse(text);
  assertFieldNames(data);
  deepStrictEqual(Object.keys(data), ["schema", "device", "conditions", "results"]);
  deepStrictEqual(parseReport(text), data);
});

Deno.test("parseReport names a missing or mistyped field", async () => {
  const data = JSON.parse(reportJson(report([row()])));
  delete data.results[0].fraction;
  await assertThrowsMessage(() => parseReport(JSON.stringify(data), "saved.json"), "saved.json: results[0].fraction");
  const bad = JSON.parse(reportJson(report([row({ bound: "memory" as "bandwidth" })])));
  await assertThrowsMessage(() => parseReport(JSON.stringify(bad)), 'bound must be "bandwidth" or "compute"');
});

Deno.test("parseReport refuses an empty file, invalid JSON, no rows and a negative fraction, naming the file", async () => {
  await assertThrowsMessage(() => parseReport("", "saved.json"), "saved.json: the file is empty, not a bench result");
  await assertThrowsMessage(() => parseReport("  \n", "saved.json"), "saved.json: the file is empty");
  await assertThrowsMessage(() => parseReport("{ not json", "saved.json"), /^saved\.json: not valid JSON \(/);
  await assertThrowsMessage(
    () => parseReport(reportJson(report([])), "saved.json"),
    'saved.json: "results" is empty: there is nothing to compare with',
  );
  await assertThrowsMessage(
    () => parseReport(reportJson(report([row({ fraction: -0.2 })])), "saved.json"),
    "saved.json: results[0].fraction must be a finite number >= 0, got -0.2",
  );
  const infinite = JSON.parse(reportJson(report([row()])));
  infinite.results[0].ms = 1e999; // JSON.parse gives Infinity
  await assertThrowsMessage(
    () => parseReport(JSON.stringify(infinite).replace('"ms":null', '"ms":1e999'), "saved.json"),
    "saved.json: results[0].ms must be a finite number >= 0",
  );
});

Deno.test("compare: an identical result passes", () => {
  const r = report([row(), row({ shape: "1024" })]);
  const c = compareReports(r, structuredClone(r));
  strictEqual(c.rows.length, 2);
  deepStrictEqual(c.regressions, []);
  ok(formatComparison(c).endsWith("no regressions"));
});

Deno.test("compare: a synthetic regression is flagged, a drop within noise is not", () => {
  const base = report([row(), row({ shape: "1024", fraction: 0.5 })]);
  const now = report([row({ fraction: 0.6 }), row({ shape: "1024", fraction: 0.47 })]);
  const c = compareReports(base, now);
  deepStrictEqual(c.regressions.map((r) => r.key), ["elementwise/kernel/kernel/67108864"]);
  ok(formatComparison(c).includes("REGRESSION elementwise/kernel/kernel/67108864: 80.0% -> 60.0%"));
});

Deno.test("compare: the threshold is max(0.05, 3 x spread), spread from the quartiles", () => {
  // Quartiles 10% apart at fraction 0.8: spread 0.08, threshold 0.24.
  const noisy = row({ msQ1: 0.95, msQ3: 1.05 });
  strictEqual(Math.round(fractionSpread(noisy) * 1e6) / 1e6, 0.08);
  const c = compareReports(report([noisy]), report([row({ fraction: 0.6 })]));
  strictEqual(Math.round(c.rows[0].threshold * 1e6) / 1e6, 0.24);
  deepStrictEqual(c.regressions, []);
  const d = compareReports(report([noisy]), report([row({ fraction: 0.5 })]));
  strictEqual(d.regressions.length, 1);
});

Deno.test("compare: rows only one side has are listed, not flagged", () => {
  const c = compareReports(report([row(), row({ shape: "1" })]), report([row(), row({ shape: "2" })]));
  deepStrictEqual(c.missing, ["elementwise/kernel/kernel/1"]);
  deepStrictEqual(c.added, ["elementwise/kernel/kernel/2"]);
  deepStrictEqual(c.regressions, []);
});

Deno.test("kernelLabel: the variant alone when it is the entry point's, else both", () => {
  strictEqual(kernelLabel({ entry: "kernel", variant: "kernel" }), "kernel");
  strictEqual(kernelLabel({ entry: "kernel", variant: "kernel.nvidia" }), "kernel.nvidia");
  strictEqual(kernelLabel({ entry: "kernel", variant: "rows" }), "kernel: rows");
  strictEqual(
    kernelLabel({ entry: "decode+combine", variant: "decode+combine_wide" }),
    "decode+combine: decode+combine_wide",
  );
});

Deno.test("formatTable aligns its columns", () => {
  const lines = formatTable([row(), row({ op: "softmax", shape: "8192x8192", fraction: 0.123 })]).split("\n");
  strictEqual(lines.length, 4);
  const at = lines[0].indexOf("roofline");
  ok(lines[2].endsWith("80.0%") && lines[3].endsWith("12.3%"));
  strictEqual(lines[2].length, lines[0].length);
  strictEqual(lines[3].length, at + "roofline".length);
});

Deno.test("HTML report is self-contained: inline SVG roofline, labelled points, no scripts or network", () => {
  const html = reportHtml(report([row(), row({ shape: "1024", intensity: 0, flops: 0, tflops: 0 })]));
  ok(html.includes("<svg") && html.includes('class="roof"'));
  ok(html.includes("bandwidth 1000 GB/s") && html.includes("compute f32 50.0 TFLOP/s"));
  ok(html.includes("<title>1. elementwise kernel 67108864"));
  ok(html.includes("<th>op</th><th>kernel</th><th>shape</th>") && !html.includes("kernel/kernel"));
  ok(html.includes("1 row(s) with no FLOPs or no bytes"));
  ok(!/<script|<link|@import|src=|href=/i.test(html));
  const urls = html.match(/https?:\/\/[^"'\s)]+/g) ?? [];
  deepStrictEqual(urls, ["http://www.w3.org/2000/svg"]); // the SVG namespace, never fetched
});

const TFJS: PeerFigure = { name: "tfjs-webgpu 4.22.0", call: "add [67108864]", ms: 2, kernels: 1 };

Deno.test("peer fields: vsPeer is ours over the peer's, and they survive the JSON round trip", () => {
  strictEqual(vsPeer(1, TFJS), 0.5);
  strictEqual(vsPeer(1, null), null);
  strictEqual(vsPeer(1, undefined), null);
  const rows = [
    row({ peer: TFJS, vsPeer: 0.5 }),
    row({ shape: "1024", peer: null, vsPeer: null, peerNote: "no peer mapping for x/y" }),
  ];
  const text = reportJson({ ...report(rows), conditions: { ...report([]).conditions, peer: "tfjs-webgpu 4.22.0, …" } });
  const data = JSON.parse(text);
  assertFieldNames(data);
  deepStrictEqual(data.results[0].peer, { name: "tfjs-webgpu 4.22.0", call: "add [67108864]", ms: 2, kernels: 1 });
  strictEqual(data.results[0].vsPeer, 0.5);
  strictEqual(data.results[1].peer, null);
  strictEqual(data.results[1].vsPeer, null);
  deepStrictEqual(parseReport(text), data);
  // A file from before the peer (no peer fields at all) still parses.
  strictEqual(parseReport(reportJson(report([row()]))).results[0].peer, undefined);
});

Deno.test("peer fields: parseReport names a malformed peer or a ratio without one", async () => {
  const bad = (over: Record<string, unknown>) => {
    const data = JSON.parse(reportJson(report([row()])));
    Object.assign(data.results[0], over);
    return () => parseReport(JSON.stringify(data), "saved.json");
  };
  await assertThrowsMessage(bad({ peer: { ...TFJS, ms: "2" } }), "saved.json: results[0].peer.ms must be a number");
  await assertThrowsMessage(bad({ peer: { ms: 2, kernels: 1 } }), "results[0].peer.name must be a string");
  await assertThrowsMessage(bad({ peer: "tfjs" }), "results[0].peer must be an object or null");
  await assertThrowsMessage(bad({ peer: TFJS, vsPeer: "0.5" }), "results[0].vsPeer must be a number or null");
  await assertThrowsMessage(bad({ peer: null, vsPeer: 0.5 }), "results[0].vsPeer without a peer");
});

Deno.test("peer fields: the table and the page show the peer only when a row has one", () => {
  const plain = formatTable([row(), row({ shape: "1024", peer: null, vsPeer: null })]);
  ok(!plain.includes("peer"), plain);
  const lines = formatTable([row({ peer: TFJS, vsPeer: 0.5 }), row({ shape: "1024", peer: null, vsPeer: null })])
    .split("\n");
  ok(lines[0].endsWith("peer ms  ours/peer"), lines[0]);
  ok(/ 2\.00 +0\.500x$/.test(lines[2]), lines[2]);
  ok(/ - +-$/.test(lines[3]), lines[3]);
  strictEqual(lines[2].length, lines[0].length);
  const html = reportHtml(report([row({ peer: TFJS, vsPeer: 0.5 }), row({ shape: "1024", peerNote: "no GELU" })]));
  ok(html.includes("<th>peer ms</th><th>ours/peer</th>"));
  ok(html.includes("Peer: <b>tfjs-webgpu 4.22.0</b>") && html.includes("1 of 2 rows have a peer figure"));
  ok(html.includes('<td title="no GELU">-</td><td>-</td>'));
  ok(html.includes("tfjs-webgpu 4.22.0 2.00 ms, ours/peer 0.500x</title>"));
  ok(!reportHtml(report([row()])).includes("peer"));
});

Deno.test("formatTable and reportHtml: a row without FLOPs shows '-' for GFLOP/s and FLOP/B, not a measured 0", () => {
  const copy = row({ op: "transpose", flops: 0, tflops: 0, intensity: 0 });
  const cells = formatTable([row(), copy]).split("\n")[3].split(/\s+/);
  deepStrictEqual(cells.slice(5, 8), ["805", "-", "-"]); // GB/s, GFLOP/s, FLOP/B
  ok(reportHtml(report([copy])).includes("<td>805</td><td>-</td><td>-</td><td>bandwidth</td>"));
  const add = formatTable([row()]).split("\n")[2].split(/\s+/);
  deepStrictEqual(add.slice(5, 8), ["805", "67.1", "0.0833"]);
});
