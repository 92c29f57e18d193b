// Runs a few ops' kernels in this page, through the package bundled for the browser (served at
// /bundle/mod.js by `deno task serve`, as esm.sh serves the JSR package), and holds each result to
// the op's reference, computed in the same page. The results are in the table and in
// `globalThis.opsResults` for the browser test.
import {
  acquireDevice,
  activation,
  activationGpu,
  elementwise,
  elementwiseGpu,
  matmul,
  matmulGpu,
  softmax,
  softmaxGpu,
  transpose,
  transposeGpu,
} from "/bundle/mod.js";

let seed = 12345;
function random(length, lo = -1, hi = 1) {
  return Float32Array.from({ length }, () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return lo + (hi - lo) * (seed / 2 ** 32);
  });
}

// Tolerances as the ops' own tests state them: f32 summation order and the WGSL error bounds of exp / tanh.
const cases = [
  ["softmax", "rows=37 cols=300", (gpu) => {
    const args = { x: random(37 * 300, -8, 8), rows: 37, cols: 300 };
    return [softmaxGpu(gpu, args), softmax(args), { atol: 1e-37, rtol: 2e-5 }];
  }],
  ["matmul", "M=67 N=45 K=130", (gpu) => {
    const args = { a: random(67 * 130), b: random(130 * 45), M: 67, N: 45, K: 130 };
    return [matmulGpu(gpu, args), matmul(args), { atol: 1e-5, rtol: 1e-5 }];
  }],
  ["elementwise", "add, 1001", (gpu) => {
    const args = { op: "add", a: random(1001), b: random(1001) };
    return [elementwiseGpu(gpu, args), elementwise(args), { atol: 0, rtol: 0 }];
  }],
  ["activation", "gelu, 999", (gpu) => {
    const args = { kind: "gelu", x: random(999, -6, 6) };
    return [activationGpu(gpu, args), activation(args), { atol: 1e-6, rtol: 1e-5 }];
  }],
  ["transpose", "rows=33 cols=70", (gpu) => {
    const args = { x: random(33 * 70), rows: 33, cols: 70 };
    return [transposeGpu(gpu, args), transpose(args), { atol: 0, rtol: 0 }];
  }],
];

const results = [];
const table = document.getElementById("results");
const status = document.getElementById("status");
try {
  const gpu = await acquireDevice();
  document.getElementById("adapter").textContent =
    `Adapter: ${gpu.adapter.vendor} ${gpu.adapter.architecture} ${gpu.adapter.description}`.trim();
  for (const [op, label, run] of cases) {
    const [pending, expected, tol] = run(gpu);
    const actual = await pending;
    let worst = 0, ok = actual.length === expected.length;
    for (let i = 0; i < expected.length; i++) {
      const diff = Math.abs(actual[i] - expected[i]);
      worst = Math.max(worst, diff);
      if (!(diff <= tol.atol + tol.rtol * Math.abs(expected[i]))) ok = false;
    }
    results.push({ op, label, worst, ok });
    const row = table.insertRow();
    for (
      const text of [op, label, "resolved for this adapter", worst.toExponential(2), `${tol.atol} + ${tol.rtol}·|e|`]
    ) {
      row.insertCell().textContent = text;
    }
    const cell = row.insertCell();
    cell.textContent = ok ? "pass" : "FAIL";
    cell.className = ok ? "pass" : "fail";
  }
  gpu.destroy();
  status.textContent = `${results.filter((r) => r.ok).length} of ${results.length} agree with their references`;
} catch (e) {
  status.textContent = `error: ${e instanceof Error ? e.message : String(e)}`;
  console.error(e);
}
globalThis.opsResults = results;
status.dataset.done = "true";
