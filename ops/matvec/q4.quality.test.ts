/**
 * What quantization costs in accuracy, on synthetic matrices (CPU only, so it cannot pass for want
 * of a GPU): per-row q8, per-row q4 and group-128 q4, on N = 256, K = 2560 weights drawn from a
 * deterministic LCG, with f64 reference arithmetic. Prints the table; asserts the qualitative facts.
 *
 * - weight RMS rel: sqrt(sum (w - dequantized)^2 / sum w^2) over the matrix (or the columns named).
 * - GEMV peak rel: max |y_q - y| / max |y| for one gaussian x, y in f64, y_q from the reference GEMV
 *   on the packed weight.
 * - bits per weight: from the packed buffers and scales actually produced.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { matvecQ4G128, matvecQ8, packQ4, packQ8, Q4_GROUP, quantizeQ4G128 } from "./mod.ts";

const N = 256, K = 2560;
const GROUPS = Math.ceil(K / Q4_GROUP);

/** Standard normal values: a 32-bit LCG's uniforms through Box-Muller. */
function gaussian(seed: number, length: number): Float32Array {
  let state = seed >>> 0;
  const uniform = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state + 0.5) / 2 ** 32;
  };
  return Float32Array.from({ length }, () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()));
}

/** Symmetric absmax quantization per `group` columns, q4g128's conventions at any range and group. */
function quantizeSymmetric(w: Float32Array, qmax: number, group: number) {
  const groups = Math.ceil(K / group);
  const codes = new Int32Array(N * K);
  const scales = new Float32Array(N * groups);
  for (let n = 0; n < N; n++) {
    for (let g = 0; g < groups; g++) {
      const start = n * K + g * group, end = n * K + Math.min(K, (g + 1) * group);
      let absmax = 0;
      for (let i = start; i < end; i++) absmax = Math.max(absmax, Math.abs(w[i]));
      if (absmax === 0) continue;
      scales[n * groups + g] = absmax / qmax;
      for (let i = start; i < end; i++) codes[i] = Math.round(w[i] * (qmax / absmax));
    }
  }
  return { codes, scales };
}

const iid = gaussian(1, N * K);
const outliers = iid.map((w, i) => (i % K) % 64 === 0 ? 20 * w : w);
const BAND = [1, 10, 100];
const bandOf = (column: number) => BAND[Math.floor(column / Q4_GROUP) % BAND.length];
const bands = iid.map((w, i) => bandOf(i % K) * w);
const x = gaussian(2, K);

interface Scheme {
  name: string;
  /** Dequantized weight, f64. */
  dequantized: Float64Array;
  /** The reference GEMV on the packed weight. */
  y: Float32Array;
  bitsPerWeight: number;
}

function schemes(w: Float32Array): Scheme[] {
  const q8 = quantizeSymmetric(w, 127, K);
  const q8Weight = packQ8(q8.codes, N, K);
  const q4row = quantizeSymmetric(w, 7, K);
  const q4rowWeight = packQ4(q4row.codes, N, K);
  const q4g = quantizeQ4G128({ x: w, rows: N, cols: K });
  const q4gWeight = packQ4(q4g.codes, N, K);
  const bits = (...arrays: ArrayBufferView[]) => arrays.reduce((s, a) => s + 8 * a.byteLength, 0) / (N * K);
  const dequantize = (codes: Int32Array, scales: Float32Array, group: number) =>
    Float64Array.from(
      codes,
      (c, i) => c * scales[Math.floor(i / K) * Math.ceil(K / group) + Math.floor((i % K) / group)],
    );
  return [
    {
      name: "q8-row",
      dequantized: dequantize(q8.codes, q8.scales, K),
      y: matvecQ8({ weight: q8Weight, scales: q8.scales, x, N, K }),
      bitsPerWeight: bits(q8Weight, q8.scales),
    },
    {
      name: "q4-row",
      dequantized: dequantize(q4row.codes, q4row.scales, K),
      // Per-row q4 in the group format: every group of a row carries the row's scale.
      y: matvecQ4G128({
        weight: q4rowWeight,
        scales: Float32Array.from({ length: N * GROUPS }, (_, i) => q4row.scales[Math.floor(i / GROUPS)]),
        x,
        N,
        K,
      }),
      bitsPerWeight: bits(q4rowWeight, q4row.scales),
    },
    {
      name: "q4-g128",
      dequantized: dequantize(q4g.codes, q4g.scales, Q4_GROUP),
      y: matvecQ4G128({ weight: q4gWeight, scales: q4g.scales, x, N, K }),
      bitsPerWeight: bits(q4gWeight, q4g.scales),
    },
  ];
}

function weightRmsRel(w: Float32Array, dequantized: Float64Array, keep: (column: number) => boolean): number {
  let err = 0, ref = 0;
  for (let i = 0; i < w.length; i++) {
    if (!keep(i % K)) continue;
    err += (w[i] - dequantized[i]) ** 2;
    ref += w[i] ** 2;
  }
  return Math.sqrt(err / ref);
}

function gemvPeakRel(w: Float32Array, yq: Float32Array): number {
  let err = 0, peak = 0;
  for (let n = 0; n < N; n++) {
    let y = 0;
    for (let k = 0; k < K; k++) y += w[n * K + k] * x[k];
    err = Math.max(err, Math.abs(yq[n] - y));
    peak = Math.max(peak, Math.abs(y));
  }
  return err / peak;
}

interface Row {
  matrix: string;
  weight: Record<string, number>;
  gemv?: Record<string, number>;
}

let measured: { rows: Row[]; bits: Record<string, number> } | undefined;
function measure() {
  if (measured) return measured;
  const rows: Row[] = [];
  const bits: Record<string, number> = {};
  const everyColumn = () => true;
  for (
    const [matrix, w] of [["iid gaussian", iid], ["+ a 20x outlier column every 64", outliers], [
      "per-128-column bands 1x/10x/100x",
      bands,
    ]] as const
  ) {
    const all = schemes(w);
    rows.push({
      matrix,
      weight: Object.fromEntries(all.map((s) => [s.name, weightRmsRel(w, s.dequantized, everyColumn)])),
      gemv: Object.fromEntries(all.map((s) => [s.name, gemvPeakRel(w, s.y)])),
    });
    if (w === bands) {
      rows.push({
        matrix: "...the same, the 1x columns only",
        weight: Object.fromEntries(all.map((s) => [s.name, weightRmsRel(w, s.dequantized, (k) => bandOf(k) === 1)])),
      });
    }
    for (const s of all) bits[s.name] = s.bitsPerWeight;
  }
  measured = { rows, bits };
  return measured;
}

Deno.test("q4 quality: the helper quantizer is quantizeQ4G128 at range 7, group 128", () => {
  const helper = quantizeSymmetric(iid, 7, Q4_GROUP);
  const library = quantizeQ4G128({ x: iid, rows: N, cols: K });
  deepStrictEqual(helper.codes, library.codes);
  deepStrictEqual(helper.scales, library.scales);
});

Deno.test("q4 quality: table (weight RMS relative error, GEMV peak relative error, bits per weight)", () => {
  const { rows, bits } = measure();
  const names = ["q8-row", "q4-row", "q4-g128"];
  const cells = (r?: Record<string, number>) => r ? names.map((n) => r[n].toExponential(2)).join(" / ") : "-";
  const lines = [
    `| matrix (N=${N}, K=${K}) | weight RMS rel: ${names.join(" / ")} | GEMV peak rel: ${names.join(" / ")} |`,
    "| --- | --- | --- |",
    ...rows.map((r) => `| ${r.matrix} | ${cells(r.weight)} | ${cells(r.gemv)} |`),
    `bits per weight: ${names.map((n) => `${n} ${bits[n].toFixed(4)}`).join(", ")}`,
  ];
  console.log(`\n${lines.join("\n")}`);
  strictEqual(rows.length, 4);
});

Deno.test("q4 quality: q8 beats both q4 schemes on iid weights; g128 beats per-row q4 on every matrix", () => {
  const [iidRow, ...rest] = measure().rows;
  for (const metric of [iidRow.weight, iidRow.gemv!]) {
    ok(metric["q8-row"] * 5 < metric["q4-g128"], `q8 ${metric["q8-row"]} vs q4-g128 ${metric["q4-g128"]}`);
    ok(metric["q4-g128"] < metric["q4-row"]);
  }
  for (const row of rest) {
    ok(row.weight["q4-g128"] < row.weight["q4-row"], row.matrix);
    if (row.gemv) ok(row.gemv["q4-g128"] < row.gemv["q4-row"], row.matrix);
  }
});

Deno.test("q4 quality: on the 1x columns of the band matrix per-row q4 rounds every code to 0; g128 does not", () => {
  const onlyOnes = measure().rows[3].weight;
  // Per-row q4: the 1x columns are below half a step of a scale set by the 100x ones, so the
  // relative error is exactly 1 (every code 0). Group-128 scales adapt and keep them.
  strictEqual(onlyOnes["q4-row"], 1);
  ok(onlyOnes["q4-g128"] < 0.2 && onlyOnes["q4-g128"] * 5 < onlyOnes["q4-row"], `${onlyOnes["q4-g128"]}`);
  // q8's per-row scale loses them too: the scale's axis matters here, not the bit width.
  ok(onlyOnes["q8-row"] > 3 * onlyOnes["q4-g128"], `${onlyOnes["q8-row"]}`);
});

Deno.test("q4 quality: bits per weight measured from the packed buffers", () => {
  const { bits } = measure();
  strictEqual(bits["q4-g128"], 4.25); // K is a multiple of 128: 4 bits of code + 32 bits of scale per 128
  strictEqual(bits["q8-row"], 8 + 32 / K);
  strictEqual(bits["q4-row"], 4 + 32 / K);
});
