// Runs the roofline probes and the chosen ops' benches in this page, through the package bundled for
// the browser (served at /bundle/... by `deno task serve`, as esm.sh serves the JSR package: the ops
// from @xpu/ops, the bench from @xpu/ops/harness/bench), draws
// the chart `deno task bench` writes and offers the result file it writes. The cases are defined here
// from the ops' published plan functions, at the shapes each op's bench.ts lists (those files are
// tooling, not published). URL parameters preset the form and `autorun` starts at once, e.g.
// `?ops=softmax,matmul&sizes=quick&samples=5&warmup=1&autorun`. The finished run is in
// `globalThis.rooflineRun` for the browser test.
import { acquireDevice, elementwisePlan, matmulPlan, rmsnormPlan, softmaxPlan, transposePlan } from "/bundle/mod.js";
import {
  defineCase,
  entryOptions,
  kernelLabel,
  percent,
  randomInput,
  reportHtml,
  reportJson,
  rooflineSvg,
  runBench,
} from "/bundle/harness/bench.js";
import { KERNELS as ELEMENTWISE } from "/bundle/ops/elementwise.js";
import { KERNELS as SOFTMAX } from "/bundle/ops/softmax.js";
import { KERNELS as RMSNORM } from "/bundle/ops/rmsnorm.js";
import { KERNELS as MATMUL } from "/bundle/ops/matmul.js";
import { KERNELS as TRANSPOSE } from "/bundle/ops/transpose.js";

const rowsByCols = ({ rows, cols }) => `${rows}x${cols}`;

// Each op's cases, with the shapes and inputs of its ops/<op>/bench.ts, so a row here has the key
// (op/entry/variant/shape) of the same row from `deno task bench` and the two files compare.
const OPS = {
  elementwise: [defineCase({
    op: "elementwise",
    entry: "kernel",
    sources: ELEMENTWISE,
    gpu: [{ n: 2 ** 24 }, { n: 2 ** 26 }],
    quick: [{ n: 4099 }, { n: 2 ** 16 }, { n: 2 ** 20 }],
    label: ({ n }) => `${n}`,
    plan: (gpu, { n }, options) => elementwisePlan(gpu, { op: "add", n }, options),
    inputs: ({ n }, seed) => [randomInput(n, seed), randomInput(n, seed + 1)],
  })],
  softmax: [defineCase({
    op: "softmax",
    entry: "kernel",
    sources: SOFTMAX,
    gpu: [{ rows: 4096, cols: 4096 }, { rows: 8192, cols: 8192 }, { rows: 65536, cols: 1024 }, {
      rows: 1024,
      cols: 65536,
    }],
    quick: [{ rows: 64, cols: 256 }, { rows: 256, cols: 1024 }, { rows: 4, cols: 12288 }],
    label: rowsByCols,
    plan: (gpu, shape, options) => softmaxPlan(gpu, shape, options),
    inputs: ({ rows, cols }, seed) => [randomInput(rows * cols, seed, 0, 8)],
  })],
  rmsnorm: [defineCase({
    op: "rmsnorm",
    entry: "kernel",
    sources: RMSNORM,
    gpu: [{ rows: 1024, cols: 1024 }, { rows: 4096, cols: 4096 }, { rows: 8192, cols: 8192 }, {
      rows: 65536,
      cols: 1024,
    }, { rows: 1024, cols: 65536 }],
    quick: [{ rows: 64, cols: 256 }, { rows: 256, cols: 1024 }, { rows: 4, cols: 12288 }],
    label: rowsByCols,
    plan: (gpu, { rows, cols }, options) => rmsnormPlan(gpu, { rows, cols, groups: 1, eps: 1e-6 }, options),
    inputs: ({ rows, cols }, seed) => [randomInput(rows * cols, seed), randomInput(cols, seed + 1)],
  })],
  matmul: [defineCase({
    op: "matmul",
    entry: "kernel",
    sources: MATMUL,
    // ops/matmul/bench.ts's `kernel` case: squares, mel's shape, the two DiTs' products, a prefill.
    gpu: [
      ...[1024, 2048, 4096].map((n) => ({ M: n, N: n, K: n })),
      { M: 2813, N: 128, K: 513 },
      { M: 4608, N: 10240, K: 3840 },
      { M: 4608, N: 3840, K: 3840 },
      { M: 4608, N: 3840, K: 10240 },
      { M: 4096, N: 8192, K: 2048 },
      { M: 512, N: 14336, K: 4096 },
    ],
    quick: [64, 128, 256].map((n) => ({ M: n, N: n, K: n })),
    label: ({ M, N, K }) => `${M}x${N}x${K}`,
    plan: (gpu, shape, options) => matmulPlan(gpu, shape, entryOptions(gpu, MATMUL, "kernel", options)),
    inputs: ({ M, N, K }, seed) => [randomInput(M * K, seed), randomInput(K * N, seed + 1)],
  })],
  transpose: [defineCase({
    op: "transpose",
    entry: "kernel",
    sources: TRANSPOSE,
    gpu: [{ rows: 2048, cols: 2048 }, { rows: 4096, cols: 4096 }, { rows: 8192, cols: 8192 }, {
      rows: 4096,
      cols: 16384,
    }],
    quick: [{ rows: 64, cols: 64 }, { rows: 256, cols: 384 }, { rows: 512, cols: 512 }],
    label: rowsByCols,
    plan: (gpu, shape, options) => transposePlan(gpu, shape, options),
    inputs: ({ rows, cols }, seed) => [randomInput(rows * cols, seed)],
  })],
};

// Each case's shape labels in both size classes, for the browser test to hold to the ops' bench.ts.
globalThis.rooflineCases = Object.values(OPS).flat().map((c) => ({
  op: c.op,
  entry: c.entry,
  gpu: c.shapes.gpu.map((s) => s.label),
  quick: c.shapes.quick.map((s) => s.label),
}));

const params = new URL(location.href).searchParams;
const $ = (id) => document.getElementById(id);
const status = $("status"), progress = $("progress"), log = $("log");
const chosen = new Set((params.get("ops") ?? Object.keys(OPS).join(",")).split(","));
for (const name of Object.keys(OPS)) {
  const label = document.createElement("label");
  const box = Object.assign(document.createElement("input"), { type: "checkbox", name, checked: chosen.has(name) });
  label.append(box, ` ${name}`);
  $("ops").append(label);
}
for (const id of ["samples", "warmup"]) if (params.has(id)) $(id).value = params.get(id);

function say(line) {
  log.textContent += `${line}\n`;
  log.scrollTop = log.scrollHeight;
}

const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toPrecision(3));

function onProgress(event) {
  switch (event.kind) {
    case "skip":
      return say(`skip ${event.where}: ${event.reason}`);
    case "probes":
      status.textContent = `measuring the roofline (then ${event.jobs} timings)…`;
      progress.removeAttribute("value");
      return say("roofline probes (each kernel known-answer checked first):");
    case "probe": {
      const p = event.result;
      return say(`  ${p.probe} ${p.kernel}: ${fmt(p.figure)} ${p.unit}`);
    }
    case "probes-skipped":
      return say(`  skipped ${event.reason}`);
    case "row":
    case "failed":
      progress.max = event.total;
      progress.value = event.done;
      status.textContent = `timed ${event.done} of ${event.total}`;
      if (event.kind === "failed") console.error(`FAILED ${event.key}: ${event.message}`);
      return say(
        event.kind === "row"
          ? `${event.key}: ${event.row.ms.toPrecision(4)} ms, ${(100 * event.row.fraction).toFixed(1)}% of ` +
            event.row.bound
          : `FAILED ${event.key}: ${event.message}`,
      );
  }
}

function slug(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "adapter";
}

function download(text, type, name, label) {
  const a = Object.assign(document.createElement("a"), {
    href: URL.createObjectURL(new Blob([text], { type })),
    download: name,
    textContent: label,
  });
  a.id = type === "application/json" ? "json" : "html";
  return a;
}

function showRows(report) {
  const table = $("rows");
  table.replaceChildren();
  const head = table.insertRow();
  for (const h of ["#", "op", "kernel", "shape", "ms", "GB/s", "GFLOP/s", "FLOP/B", "bound", "roofline"]) {
    head.append(Object.assign(document.createElement("th"), { textContent: h }));
  }
  report.results.forEach((r, i) => {
    const row = table.insertRow();
    const cells = [i + 1, r.op, kernelLabel(r), r.shape, fmt(r.ms), fmt(r.gbps)];
    // A row without FLOPs (a copy, a gather) has no rate or intensity to show, as in the bench's table.
    if (r.flops === 0) cells.push("-", "-");
    else cells.push(fmt(r.tflops * 1e3), r.intensity === null ? "-" : fmt(r.intensity));
    cells.push(r.bound, percent(r.fraction));
    for (const c of cells) row.insertCell().textContent = String(c);
  });
}

let gpu;
try {
  gpu = await acquireDevice();
  $("adapter").textContent = `Adapter: ${gpu.adapter.vendor} ${gpu.adapter.architecture} ${gpu.adapter.description}`
    .replace(/\s+/g, " ").trim() + (gpu.adapter.isFallbackAdapter ? " (fallback adapter)" : "");
  $("sizes").value = params.get("sizes") ?? (gpu.adapter.isFallbackAdapter ? "quick" : "gpu");
  $("run").disabled = false;
} catch (e) {
  $("adapter").textContent = `No WebGPU device: ${e instanceof Error ? e.message : String(e)}`;
  console.error(e);
}

async function run() {
  const names = [...document.querySelectorAll("#ops input:checked")].map((box) => box.name);
  if (names.length === 0) {
    status.textContent = "choose at least one op";
    return;
  }
  $("run").disabled = true;
  log.textContent = "";
  $("chart").replaceChildren();
  $("downloads").replaceChildren();
  $("rows").replaceChildren();
  delete status.dataset.done;
  try {
    const { report, failures } = await runBench(gpu, names.flatMap((name) => OPS[name]), {
      sizes: $("sizes").value,
      samples: Math.max(5, Number($("samples").value)),
      warmup: Math.max(0, Number($("warmup").value)),
      cacheBytes: 50 * 2 ** 20,
      runtime: `browser: ${navigator.userAgent}`,
      os: navigator.userAgentData?.platform || navigator.platform || "unknown",
      onProgress,
    });
    report.conditions.peer = "off (the page runs no peer)";
    $("chart").innerHTML = rooflineSvg(report);
    showRows(report);
    const name = `roofline-${slug(report.device.description)}`;
    $("downloads").append(
      download(reportJson(report), "application/json", `${name}.json`, "Save the result (JSON)"),
      " for deno task bench --compare; ",
      download(reportHtml(report), "text/html", `${name}.html`, "save the chart (HTML)"),
    );
    status.textContent = `${report.results.length} rows` + (failures ? `, ${failures} failed` : "") +
      `; bandwidth ${fmt(report.device.bandwidthGBps)} GB/s, compute f32 ${fmt(report.device.computeTFLOPs)} TFLOP/s`;
    globalThis.rooflineRun = { report, failures };
  } catch (e) {
    status.textContent = `error: ${e instanceof Error ? e.message : String(e)}`;
    console.error(e);
  } finally {
    $("run").disabled = false;
    status.dataset.done = "true";
  }
}

$("choices").addEventListener("submit", (event) => {
  event.preventDefault();
  run();
});
if (gpu && params.has("autorun")) await run();
else if (!gpu) status.dataset.done = "true";
