import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "./testing.ts";
import {
  type BenchReport,
  type BenchRow,
  compareReports,
  formatComparison,
  formatTable,
  fractionSpread,
  parseReport,
  reportHtml,
  reportJson,
  rowFigures,
  SCHEMA,
} from "./report.ts";
import { benchMain } from "./bench.ts";

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
  ok(html.includes("<title>1. elementwise/kernel/kernel/67108864"));
  ok(html.includes("1 row(s) with no FLOPs or no bytes"));
  ok(!/<script|<link|@import|src=|href=/i.test(html));
  const urls = html.match(/https?:\/\/[^"'\s)]+/g) ?? [];
  deepStrictEqual(urls, ["http://www.w3.org/2000/svg"]); // the SVG namespace, never fetched
});

gpuTest("deno task bench --quick writes the JSON and HTML, and --compare exits 1 on a regression", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const json = `${dir}/bench.json`;
    const args = ["--quick", "--filter", "elementwise/kernel/kernel/4096", "--samples", "5", "--warmup", "1"];
    strictEqual(await benchMain([...args, "--json", json]), 0);
    const text = await Deno.readTextFile(json);
    const data = JSON.parse(text);
    assertFieldNames(data);
    strictEqual(data.results.length, 1);
    strictEqual(data.results[0].shape, "4096");
    ok(data.results[0].ms > 0 && data.device.bandwidthGBps > 0 && data.device.computeTFLOPs > 0);
    ok((await Deno.readTextFile(`${dir}/bench.html`)).includes("<svg"));
    // A saved result where this row reached far more of its roofline than any run can now.
    data.results[0].fraction = 50;
    await Deno.writeTextFile(`${dir}/better.json`, JSON.stringify(data));
    strictEqual(await benchMain([...args, "--json", `${dir}/again.json`, "--compare", `${dir}/better.json`]), 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
