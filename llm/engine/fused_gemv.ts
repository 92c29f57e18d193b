/**
 * The decode step's weight products with their neighbours folded in: `out = W · in(x)` for one row
 * of activations, in each weight format (f32, q8, q4g128 as stored), where the product's input and
 * output steps are part of the same dispatch:
 *
 * - input `plain`: `in(x) = x`.
 * - input `norm`: RMSNorm of `x` (HF's LlamaRMSNorm: `x / sqrt(mean(x^2) + eps) * g`). The norm's
 *   scalar factor commutes with the product, so each workgroup multiplies `x` by the norm weight `g`
 *   as it reads it, sums `x^2` over the whole row itself (`K` floats, from cache: the hidden vector
 *   is small beside any weight), and scales its dot products at the end:
 *   `out = inverseSqrt(mean(x^2) + eps) * (W · (x * g))`. No normalised copy of `x` is written; the
 *   result differs from normalising first only by f32 rounding (the engine's tests hold it to
 *   transformers' logits at the same tolerance as before).
 * - output `store`: `out[out0 + n] = y[n]`.
 * - output `add`: `out[out0 + n] += y[n]`, the residual connection (`out` is the hidden state `x`,
 *   which the product does not read: its input is another buffer).
 * - output `swiglu`: the weight's rows come in pairs, gate and up of one FFN channel (rows 2j and
 *   2j + 1: resident.ts interleaves `[gate | up]`), and `out[out0 + j] = silu(y[2j]) * y[2j + 1]`.
 *   A pair is always in the same invocation's four rows, so the FFN's activation costs nothing.
 *
 * `out0` places a row block's outputs in the whole output (a weight split across bindings writes
 * each block's rows where they belong, with no copy; for `swiglu` it counts pairs).
 *
 * Layouts, after ops/matvec's NVIDIA quantised kernels (whose module doc says why each is shaped so):
 * every invocation sums four rows over the same columns, so an activation it reads serves four rows
 * of weight, and a row group's partial sums are reduced by a tree in workgroup memory. Measured in
 * the engine on the H200 in `harness/baselines/nvidia-h200-llm.md` (2026-12-02, Deno 2.9.6, GPU
 * timestamps, each product in a pass of its own, median of 3: q8 QKV 11.6 us, O 8.8, gate/up 20.8,
 * down 13.1, 38-62% of a read of the same bytes; `nvidia-h200-log/30-engine-bench.txt`). Staging
 * q8's input through workgroup memory as q4g128 does was slower at these shapes (QKV 16.3 us,
 * gate/up 24.1: at K = 1,792 each invocation has one vec4<u32> per row, so the tile's two barriers
 * cost more than the cached reads they save; `30-engine-ab-staged.txt`), and is not done; q8 sums
 * the input's squares after its products rather than before, which measured the same (11.6 against
 * 11.5 us for QKV).
 * - q8: 128 invocations across K, two row groups (8 rows), a vec4<u32> (16 codes) of each row in
 *   flight, decoded as ops/matvec's q8row.nvidia decodes (bits masked into a float's mantissa, no
 *   integer-to-float conversion); the row's scale multiplies the finished dot product.
 * - f32: the same layout, two vec4s of each row in flight.
 * - q4g128: 64 invocations across K, four row groups (16 rows), two vec4<u32> of each row in
 *   flight, `in(x)` staged through workgroup memory in tiles of 4,096 columns (swizzled against
 *   bank conflicts) that the row groups share, as q4g128.nvidia does; each vec4<u32>'s dot product
 *   is scaled by its group's scale.
 * When a row does not start on a 16-byte boundary (q8: K % 16 != 0; q4g128: K % 32 != 0) the
 * quantised kernels read a word at a time, and q4g128's last word, half padding when K % 8 == 4,
 * is read with the padding's activations replaced by 0.
 *
 * Requires K % 4 == 0 (activations are read as vec4s; the engine refuses other shapes) and, for
 * `swiglu`, an even number of rows. Rows past `n` are read as row `n - 1` (no load needs a guard)
 * and never written. Workgroups past 65,535 fold into a second grid dimension.
 *
 * @module
 */

import type { WeightFormat } from "../weights/format.ts";

/** What a fused product reads: `x` as it is, or its RMSNorm. */
export type GemvInput = "plain" | "norm";

/** What a fused product does with its result: store it, add it to the output, or apply SwiGLU to row pairs. */
export type GemvOutput = "store" | "add" | "swiglu";

/** Rows one workgroup of each format's fused product computes. */
export const FUSED_GEMV_ROWS: Readonly<Record<WeightFormat, number>> = { f32: 8, q8: 8, q4g128: 16 };

/** The uniform of every fused product: rows of the block, columns, the output's offset, RMSNorm's epsilon. */
const PARAMS = `struct P { n: u32, k: u32, out0: u32, eps: f32 }`;

function bindings(format: WeightFormat, input: GemvInput): string {
  const lines = [`var<storage, read> weight: array<${format === "f32" ? "vec4f" : "vec4u"}>;`];
  if (format !== "f32") lines.push("var<storage, read> scales: array<f32>;");
  lines.push("var<storage, read> x: array<vec4f>;");
  if (input === "norm") lines.push("var<storage, read> g: array<vec4f>;");
  lines.push("var<storage, read_write> out: array<f32>;", "var<uniform> p: P;");
  return lines.map((l, i) => `@group(0) @binding(${i}) ${l}`).join("\n");
}

/** `xin(i)`: vec4 `i` of the product's input; with `norm`, also this invocation's share of `sum(x^2)`. */
function inputFunctions(input: GemvInput): string {
  if (input === "plain") return `fn xin(i: u32) -> vec4f { return x[i]; }`;
  return `fn xin(i: u32) -> vec4f { return x[i] * g[i]; }

// Sum of x^2 over the vec4s tid, tid + 256, ...: with every invocation's share, the whole row's.
fn sum_squares(tid: u32) -> f32 {
  var s = 0.0;
  for (var i = tid; i < p.k / 4u; i += 256u) { s += dot(x[i], x[i]); }
  return s;
}`;
}

/** `put(r, y)`: rows r .. r + 3 of the block have the results y (r a multiple of 4). */
function outputFunction(output: GemvOutput): string {
  if (output === "swiglu") {
    return `fn put(r: u32, y: vec4f) {
  if (r < p.n) { out[p.out0 + r / 2u] = y.x / (1.0 + exp(-y.x)) * y.y; }
  if (r + 2u < p.n) { out[p.out0 + r / 2u + 1u] = y.z / (1.0 + exp(-y.z)) * y.w; }
}`;
  }
  const op = output === "add" ? "+=" : "=";
  return `fn put(r: u32, y: vec4f) {
  for (var j = 0u; j < 4u; j++) {
    if (r + j < p.n) { out[p.out0 + r + j] ${op} y[j]; }
  }
}`;
}

/**
 * Where the invocations' sums of squares are reduced: `squares` of their own, or (q4g128, whose
 * tile fills WebGPU's default 16 KiB of workgroup memory) the x components of the tile's vec4s
 * after the partial sums'.
 */
type Squares = (i: string) => string;
const OWN_SQUARES: Squares = (i) => `squares[${i}]`;
const TILE_SQUARES: Squares = (i) => `scratch[256u + ${i}].x`;

/**
 * The tree reduction of each row group's partial sums (`scratch[first + lane]`, vec4s: four rows)
 * and, with `norm`, of the invocations' sums of squares, from `lanes` lanes to one, a barrier after
 * each halving. The caller has written both and passed a barrier.
 */
function tree(lanes: number, squares: Squares | null): string {
  const steps: string[] = [];
  for (let s = lanes / 2; s >= 1; s /= 2) {
    const sq = squares ? ` ${squares("first + lane")} += ${squares(`first + lane + ${s}u`)};` : "";
    steps.push(`  if (lane < ${s}u) { scratch[first + lane] += scratch[first + lane + ${s}u];${sq} }
  workgroupBarrier();`);
  }
  return steps.join("\n");
}

/**
 * The factor that finishes a row group's results: RMSNorm's `inverseSqrt(mean(x^2) + eps)` from the
 * row groups' sums of squares (each group summed its invocations' shares), or nothing.
 */
function finish(input: GemvInput, groups: number, lanes: number, squares: Squares): string {
  if (input === "plain") return "let f = 1.0;";
  const terms = Array.from({ length: groups }, (_, g) => squares(`${g * lanes}u`)).join(" + ");
  return `let f = inverseSqrt((${terms}) / f32(p.k) + p.eps);`;
}

/** The int8 decode of ops/matvec's q8row.nvidia: a word's four codes as floats, exactly. */
const Q8_DECODE = `const MASK = vec4u(0xffu, 0xff00u, 0xffu, 0xff00u);
const MAGIC = vec4u(0x4b000080u, 0x47008000u, 0x4b000080u, 0x47008000u); // 2^23, 2^15, sign bits flipped
const BIAS = vec4f(8388736.0, 32896.0, 8388736.0, 32896.0); // 2^23 + 128, 2^15 + 128
fn q8(w: u32) -> vec4f {
  return bitcast<vec4f>((vec4u(w, w, w >> 16u, w >> 16u) & MASK) ^ MAGIC) - BIAS;
}`;

/** The int4 decode of ops/matvec's q4g128.nvidia: a half word's four codes (nibbles 0-3) as floats, exactly. */
const Q4_DECODE = `const MASK = vec4u(0xfu, 0xf0u, 0xf00u, 0xf000u);
const MAGIC = vec4u(0x4b000008u, 0x49000080u, 0x47000800u, 0x45008000u); // 2^23, 2^19, 2^15, 2^11, sign bits flipped
const BIAS = vec4f(8388616.0, 524296.0, 32776.0, 2056.0); // 2^23 + 8, 2^19 + 8, 2^15 + 8, 2^11 + 8
fn q4(h: u32) -> vec4f {
  return bitcast<vec4f>((vec4u(h) & MASK) ^ MAGIC) - BIAS;
}

// The dot product of a vec4<u32> of 32 codes with their 32 activations, four per vec4 of x.
fn chunk_dot(q: vec4u, x0: vec4f, x1: vec4f, x2: vec4f, x3: vec4f, x4: vec4f, x5: vec4f, x6: vec4f, x7: vec4f) -> f32 {
  var v = q4(q.x) * x0;
  v = fma(q4(q.x >> 16u), x1, v);
  v = fma(q4(q.y), x2, v);
  v = fma(q4(q.y >> 16u), x3, v);
  v = fma(q4(q.z), x4, v);
  v = fma(q4(q.z >> 16u), x5, v);
  v = fma(q4(q.w), x6, v);
  v = fma(q4(q.w >> 16u), x7, v);
  return (v.x + v.y) + (v.z + v.w);
}

// The dot product of one word of 8 codes with its activations xa (codes 0-3) and xb (codes 4-7).
fn word_dot(w: u32, xa: vec4f, xb: vec4f) -> f32 {
  let v = fma(q4(w >> 16u), xb, q4(w) * xa);
  return (v.x + v.y) + (v.z + v.w);
}`;

/**
 * The start of every layout's main: this invocation's index `tid`, lane and first row `row`, its
 * four rows r0..r3 clamped to the block, `first` (its row group's slot in scratch) and, with `norm`,
 * its share of the sum of squares.
 */
function start(lanes: number, groups: number, input: GemvInput, squares = true): string {
  return `  let lane = lid.x;
  let tid = lid.y * ${lanes}u + lane;
  let n = p.n;
  let k = p.k;
  let row = ((wid.x + wid.y * nwg.x) * ${groups}u + lid.y) * 4u;
  let r0 = min(row, n - 1u);
  let r1 = min(row + 1u, n - 1u);
  let r2 = min(row + 2u, n - 1u);
  let r3 = min(row + 3u, n - 1u);
  let first = lid.y * ${lanes}u;${input === "norm" && squares ? "\n  let ss = sum_squares(tid);" : ""}`;
}

const MAIN_ARGS = `@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u`;

function f32Source(input: GemvInput, output: GemvOutput): string {
  const norm = input === "norm";
  return `${PARAMS}
${bindings("f32", input)}
${inputFunctions(input)}
${outputFunction(output)}
var<workgroup> scratch: array<vec4f, 256>;
${norm ? "var<workgroup> squares: array<f32, 256>;" : ""}

@compute @workgroup_size(128, 2)
fn main(${MAIN_ARGS}) {
${start(128, 2, input)}
  let quads = k / 4u;
  let b0 = r0 * quads;
  let b1 = r1 * quads;
  let b2 = r2 * quads;
  let b3 = r3 * quads;
  var a0 = vec4f(0.0);
  var a1 = vec4f(0.0);
  var a2 = vec4f(0.0);
  var a3 = vec4f(0.0);
  for (var i = lane; i < quads; i += 256u) {
    // Quads i and i + 128 of each row; past the row, its last quad again with x taken as 0.
    let j = min(i + 128u, quads - 1u);
    let xa = xin(i);
    let xb = select(vec4f(0.0), xin(j), i + 128u < quads);
    let w0 = weight[b0 + i];
    let w1 = weight[b1 + i];
    let w2 = weight[b2 + i];
    let w3 = weight[b3 + i];
    let v0 = weight[b0 + j];
    let v1 = weight[b1 + j];
    let v2 = weight[b2 + j];
    let v3 = weight[b3 + j];
    a0 = fma(v0, xb, fma(w0, xa, a0));
    a1 = fma(v1, xb, fma(w1, xa, a1));
    a2 = fma(v2, xb, fma(w2, xa, a2));
    a3 = fma(v3, xb, fma(w3, xa, a3));
  }
  scratch[tid] = vec4f(dot(a0, vec4f(1.0)), dot(a1, vec4f(1.0)), dot(a2, vec4f(1.0)), dot(a3, vec4f(1.0)));
  ${norm ? "squares[tid] = ss;" : ""}
  workgroupBarrier();
${tree(128, norm ? OWN_SQUARES : null)}
  ${finish(input, 2, 128, OWN_SQUARES)}
  if (lane == 0u) { put(row, scratch[first] * f); }
}`;
}

function q8Source(input: GemvInput, output: GemvOutput): string {
  const norm = input === "norm";
  return `${PARAMS}
${bindings("q8", input)}
${inputFunctions(input)}
${outputFunction(output)}
${Q8_DECODE}
fn word(e: u32) -> u32 { return weight[e / 4u][e % 4u]; }
var<workgroup> scratch: array<vec4f, 256>;
${norm ? "var<workgroup> squares: array<f32, 256>;" : ""}

@compute @workgroup_size(128, 2)
fn main(${MAIN_ARGS}) {
${start(128, 2, input, false)}
  var a0 = vec4f(0.0); // row r0's products, column j % 4 in component j % 4
  var a1 = vec4f(0.0);
  var a2 = vec4f(0.0);
  var a3 = vec4f(0.0);
  if (k % 16u == 0u) {
    let chunks = k / 16u; // vec4<u32> per row
    let b0 = r0 * chunks;
    let b1 = r1 * chunks;
    let b2 = r2 * chunks;
    let b3 = r3 * chunks;
    for (var i = lane; i < chunks; i += 128u) {
      let q0 = weight[b0 + i];
      let q1 = weight[b1 + i];
      let q2 = weight[b2 + i];
      let q3 = weight[b3 + i];
      let x0 = xin(4u * i);
      let x1 = xin(4u * i + 1u);
      let x2 = xin(4u * i + 2u);
      let x3 = xin(4u * i + 3u);
      a0 = fma(q8(q0.w), x3, fma(q8(q0.z), x2, fma(q8(q0.y), x1, fma(q8(q0.x), x0, a0))));
      a1 = fma(q8(q1.w), x3, fma(q8(q1.z), x2, fma(q8(q1.y), x1, fma(q8(q1.x), x0, a1))));
      a2 = fma(q8(q2.w), x3, fma(q8(q2.z), x2, fma(q8(q2.y), x1, fma(q8(q2.x), x0, a2))));
      a3 = fma(q8(q3.w), x3, fma(q8(q3.z), x2, fma(q8(q3.y), x1, fma(q8(q3.x), x0, a3))));
    }
  } else {
    let words = k / 4u; // K % 4 == 0: no padding
    let b0 = r0 * words;
    let b1 = r1 * words;
    let b2 = r2 * words;
    let b3 = r3 * words;
    for (var j = lane; j < words; j += 128u) {
      let xv = xin(j);
      a0 = fma(q8(word(b0 + j)), xv, a0);
      a1 = fma(q8(word(b1 + j)), xv, a1);
      a2 = fma(q8(word(b2 + j)), xv, a2);
      a3 = fma(q8(word(b3 + j)), xv, a3);
    }
  }
  scratch[tid] = vec4f((a0.x + a0.y) + (a0.z + a0.w), (a1.x + a1.y) + (a1.z + a1.w),
    (a2.x + a2.y) + (a2.z + a2.w), (a3.x + a3.y) + (a3.z + a3.w));
  // The sum of squares after the products: its reads of x hit the cache the products filled, and
  // the weight's loads, the long ones, are not queued behind them.
  ${norm ? "squares[tid] = sum_squares(tid);" : ""}
  workgroupBarrier();
${tree(128, norm ? OWN_SQUARES : null)}
  ${finish(input, 2, 128, OWN_SQUARES)}
  if (lane == 0u) {
    put(row, scratch[first] * vec4f(scales[r0], scales[r1], scales[r2], scales[r3]) * f);
  }
}`;
}

function q4Source(input: GemvInput, output: GemvOutput): string {
  const norm = input === "norm";
  return `${PARAMS}
${bindings("q4g128", input)}
${inputFunctions(input)}
${outputFunction(output)}
${Q4_DECODE}
fn word(e: u32) -> u32 { return weight[e / 4u][e % 4u]; }
const TILE = 128u; // vec4<u32> of each row per tile (4096 columns), two per invocation
// The input's tile (8 vec4s for each of the tile's TILE vec4<u32>), then the partial sums and the
// sums of squares.
var<workgroup> scratch: array<vec4f, 8u * TILE>;

@compute @workgroup_size(64, 4)
fn main(${MAIN_ARGS}) {
${start(64, 4, input)}
  var a0 = 0.0; // row r0's dot product
  var a1 = 0.0;
  var a2 = 0.0;
  var a3 = 0.0;
  let ngroups = (k + 127u) / 128u; // scales per row
  let g0 = r0 * ngroups;
  let g1 = r1 * ngroups;
  let g2 = r2 * ngroups;
  let g3 = r3 * ngroups;
  if (k % 32u == 0u) {
    let chunks = k / 32u; // vec4<u32> per row
    let last = chunks - 1u;
    let b0 = r0 * chunks;
    let b1 = r1 * chunks;
    let b2 = r2 * chunks;
    let b3 = r3 * chunks;
    let xlast = k / 4u - 1u; // the input's last vec4
    let slot = tid ^ ((tid >> 3u) & 7u); // vec4 tid of a tile, swizzled (tid + 256: slot + 256, and so on)
    let sw = lane & 7u; // the swizzle of this invocation's reads
    for (var t = 0u; t < chunks; t += TILE) {
      // This invocation's chunks of the tile, c0 and c1, and their loads (past the row: its last chunk).
      let c0 = t + lane;
      let c1 = t + lane + 64u;
      let l0 = min(c0, last);
      let l1 = min(c1, last);
      let q00 = weight[b0 + l0];
      let q01 = weight[b1 + l0];
      let q02 = weight[b2 + l0];
      let q03 = weight[b3 + l0];
      let q10 = weight[b0 + l1];
      let q11 = weight[b1 + l1];
      let q12 = weight[b2 + l1];
      let q13 = weight[b3 + l1];
      let s00 = scales[g0 + l0 / 4u];
      let s01 = scales[g1 + l0 / 4u];
      let s02 = scales[g2 + l0 / 4u];
      let s03 = scales[g3 + l0 / 4u];
      let s10 = scales[g0 + l1 / 4u];
      let s11 = scales[g1 + l1 / 4u];
      let s12 = scales[g2 + l1 / 4u];
      let s13 = scales[g3 + l1 / 4u];
      workgroupBarrier(); // the previous tile is no longer read
      let src = 8u * t + tid; // the input's vec4 for slot
      if (src <= xlast) { scratch[slot] = xin(src); }
      if (src + 256u <= xlast) { scratch[slot + 256u] = xin(src + 256u); }
      if (src + 512u <= xlast) { scratch[slot + 512u] = xin(src + 512u); }
      if (src + 768u <= xlast) { scratch[slot + 768u] = xin(src + 768u); }
      workgroupBarrier();
      if (c0 < chunks) {
        let at = 8u * lane; // this chunk's 8 vec4s of the input in the tile, swizzled by sw
        let x0 = scratch[at + (0u ^ sw)];
        let x1 = scratch[at + (1u ^ sw)];
        let x2 = scratch[at + (2u ^ sw)];
        let x3 = scratch[at + (3u ^ sw)];
        let x4 = scratch[at + (4u ^ sw)];
        let x5 = scratch[at + (5u ^ sw)];
        let x6 = scratch[at + (6u ^ sw)];
        let x7 = scratch[at + (7u ^ sw)];
        a0 = fma(s00, chunk_dot(q00, x0, x1, x2, x3, x4, x5, x6, x7), a0);
        a1 = fma(s01, chunk_dot(q01, x0, x1, x2, x3, x4, x5, x6, x7), a1);
        a2 = fma(s02, chunk_dot(q02, x0, x1, x2, x3, x4, x5, x6, x7), a2);
        a3 = fma(s03, chunk_dot(q03, x0, x1, x2, x3, x4, x5, x6, x7), a3);
      }
      if (c1 < chunks) {
        let at = 8u * (lane + 64u);
        let x0 = scratch[at + (0u ^ sw)];
        let x1 = scratch[at + (1u ^ sw)];
        let x2 = scratch[at + (2u ^ sw)];
        let x3 = scratch[at + (3u ^ sw)];
        let x4 = scratch[at + (4u ^ sw)];
        let x5 = scratch[at + (5u ^ sw)];
        let x6 = scratch[at + (6u ^ sw)];
        let x7 = scratch[at + (7u ^ sw)];
        a0 = fma(s10, chunk_dot(q10, x0, x1, x2, x3, x4, x5, x6, x7), a0);
        a1 = fma(s11, chunk_dot(q11, x0, x1, x2, x3, x4, x5, x6, x7), a1);
        a2 = fma(s12, chunk_dot(q12, x0, x1, x2, x3, x4, x5, x6, x7), a2);
        a3 = fma(s13, chunk_dot(q13, x0, x1, x2, x3, x4, x5, x6, x7), a3);
      }
    }
  } else {
    let words = (k + 7u) / 8u; // words per row
    let full = k / 8u; // words with no padding
    let b0 = r0 * words;
    let b1 = r1 * words;
    let b2 = r2 * words;
    let b3 = r3 * words;
    for (var j = lane; j < full; j += 64u) {
      let xa = xin(2u * j);
      let xb = xin(2u * j + 1u);
      a0 = fma(scales[g0 + j / 16u], word_dot(word(b0 + j), xa, xb), a0);
      a1 = fma(scales[g1 + j / 16u], word_dot(word(b1 + j), xa, xb), a1);
      a2 = fma(scales[g2 + j / 16u], word_dot(word(b2 + j), xa, xb), a2);
      a3 = fma(scales[g3 + j / 16u], word_dot(word(b3 + j), xa, xb), a3);
    }
    if (full < words && lane == full % 64u) {
      // K % 8 == 4: the last word's codes 4-7 are padding, their activations taken as 0.
      let xa = xin(2u * full);
      let xb = vec4f(0.0);
      a0 = fma(scales[g0 + full / 16u], word_dot(word(b0 + full), xa, xb), a0);
      a1 = fma(scales[g1 + full / 16u], word_dot(word(b1 + full), xa, xb), a1);
      a2 = fma(scales[g2 + full / 16u], word_dot(word(b2 + full), xa, xb), a2);
      a3 = fma(scales[g3 + full / 16u], word_dot(word(b3 + full), xa, xb), a3);
    }
  }
  workgroupBarrier(); // the last tile is no longer read: its memory takes the partial sums
  scratch[tid] = vec4f(a0, a1, a2, a3);
  ${norm ? "scratch[256u + tid] = vec4f(ss, 0.0, 0.0, 0.0);" : ""}
  workgroupBarrier();
${tree(64, norm ? TILE_SQUARES : null)}
  ${finish(input, 4, 64, TILE_SQUARES)}
  if (lane == 0u) { put(row, scratch[first] * f); }
}`;
}

/**
 * The WGSL of a fused decode product. Bindings in order: `weight`, `scales` (q8, q4g128), `x`,
 * `g` (the norm weight, with `norm`), `out`, and the params `[n, k, out0, eps]` (u32, u32, u32,
 * f32). One workgroup per {@link FUSED_GEMV_ROWS} rows.
 *
 * @param format the weight's stored format
 * @param input the product's input
 * @param output what it does with its result
 * @returns the kernel source
 */
export function fusedGemvSource(format: WeightFormat, input: GemvInput, output: GemvOutput): string {
  if (format === "f32") return f32Source(input, output);
  if (format === "q8") return q8Source(input, output);
  return q4Source(input, output);
}
