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
 * of weight, and a row group's partial sums are reduced in workgroup memory. Which layout a weight
 * takes depends on its rows ({@link FUSED_GEMV_LAYOUTS}):
 * - `lanes` (q8 at every size, f32 from 6,144 rows): `lanes` invocations across K per row group,
 *   `unroll` vec4s of each row loaded before any is multiplied (past the row: its last vec4 again,
 *   with x taken as 0), x read from global memory (and, with `norm`, its squares summed from the
 *   same loads: each row group covers K once, so it needs no other group's share), the partial sums
 *   reduced in one or two stages of 8-32 additions by one invocation each rather than a tree of
 *   halvings. q8 decodes as ops/matvec's q8row.nvidia (bits masked into a float's mantissa, no
 *   integer-to-float conversion) and scales the finished dot product. q8 takes 32 lanes x 2 groups,
 *   two vec4<u32> in flight, from 6,144 rows (gate/up), 64 x 2 with two from 3,072 (QKV), and
 *   128 x 2 with one (a reduction of 16 then 8) below (O, down).
 * - `f32-wide` (f32 below 6,144 rows): 128 invocations across K, two row groups (8 rows), two vec4s
 *   of each row in flight, a tree of halvings with a barrier each.
 * - `q4-tiled` (q4g128): 64 invocations across K, four row groups (16 rows), two vec4<u32> of each
 *   row in flight, `in(x)` staged through workgroup memory in tiles of 4,096 columns (swizzled
 *   against bank conflicts) that the row groups share, as q4g128.nvidia does; each vec4<u32>'s dot
 *   product is scaled by its group's scale; a tree of halvings.
 *
 * Measured on the H200 (2026-12-02, Deno 2.9.6, GPU timestamps; `nvidia-h200-log/33-gemv-ab.txt`,
 * a scratch A/B: each variant 24 times back to back in one pass over 24 copies of the weight, per
 * dispatch, median of 9 passes, variants interleaved; the bench figures are in
 * `33-gemv-bench.txt`). Against the layout before (q8 128 x 2, one vec4<u32> in flight, a tree of
 * seven halvings, the squares summed in a loop of their own): q8 QKV 8.28 -> 7.86 us, gate/up
 * 17.12 -> 13.24, down 9.92 -> 9.64; O measured 14.67 before and 15.17 with 128 x 2 and the
 * two-stage reduction, but in a stretch of that run where even the plain read ran at half speed,
 * so it decides nothing (in the other three shapes that layout, with its reduction and squares,
 * gained 0.1-2.4 us on the one before). f32
 * gate/up 28.65 -> 26.31 us (32 x 4, four vec4s in flight). Fewer lanes with more loads each lost
 * everywhere: q8 QKV took 11.3-11.9 us with 32 lanes, 10.4-13.9 with 16 (4-8 vec4<u32> of each row
 * in flight, 2-16 groups, a reduction flat or by halvings) and 19.6-23.5 with 8; down 15.4-18.9,
 * 20.4-25.4 and 45.7-54.3. At these sizes the whole product is about one wave of workgroups, and
 * the decode's arithmetic after the loads is shortest when spread over the most invocations. K
 * compiled in as a constant (the loops' trip counts known to the compiler) moved figures by under
 * 0.6 us either way. For q4g128 every `lanes` layout (4-32 lanes, x read from
 * global memory: an invocation's 32 codes need 8 vec4s of it, 128 bytes apart across a warp) took
 * 1.6-4x the staged layout's time (one layer's four products 110-280 us against 68), so q4g128 keeps
 * it. For f32 below 6,144 rows `f32-wide` beat every `lanes` layout (QKV 10.27 us against 11.4-16.2).
 * In bench:llm at the Sarashina2.2-1B shape (`33-gemv-bench.txt`, `33-gemv-bench-f32.txt`, against
 * `30-engine-bench.txt`): the q8 decode step 1.411 -> 1.317 ms of GPU in its one pass, 779 -> 801
 * tok/s wall; f32 2.078 -> 2.022 ms, 544 -> 558 tok/s (gate/up 32.3 -> 29.4 us in a pass of its
 * own, 85% of a read of its bytes); q4g128 unchanged (1.29 ms, 847 tok/s). Each q8 product in a pass
 * of its own: O 8.84 -> 9.27 us, gate/up 20.76 -> 19.24, down 13.08 -> 13.01, and QKV 11.59 -> 14.75,
 * slower, though the A/B's own-pass figure had its layout faster (10.85 against 11.14 us) and the
 * whole step, where it runs in one pass with the rest, is faster; not explained.
 *
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
 * four rows r0..r3 clamped to the block, `first` (its row group's slot in scratch) and, with
 * `sumSquares`, its share of the sum of squares by `sum_squares` (`lanes` sums them from its own loads).
 */
function start(lanes: number, groups: number, sumSquares: boolean): string {
  return `  let lane = lid.x;
  let tid = lid.y * ${lanes}u + lane;
  let n = p.n;
  let k = p.k;
  let row = ((wid.x + wid.y * nwg.x) * ${groups}u + lid.y) * 4u;
  let r0 = min(row, n - 1u);
  let r1 = min(row + 1u, n - 1u);
  let r2 = min(row + 2u, n - 1u);
  let r3 = min(row + 3u, n - 1u);
  let first = lid.y * ${lanes}u;${sumSquares ? "\n  let ss = sum_squares(tid);" : ""}`;
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
${start(128, 2, norm)}
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
${start(64, 4, norm)}
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
 * How a fused product spreads its work. `lanes`: `lanes` invocations across K for each group of
 * four rows, `groups` row groups per workgroup (`4 * groups` rows), `unroll` chunks (vec4s of the
 * weight) of each row loaded before any is multiplied, x read from global memory, and a row
 * group's partial sums reduced in stages, each adding `reduce[i]` values (the factors multiply to
 * `lanes`; a barrier after each stage but the last, which one invocation per row group does as it
 * writes the results). `f32-wide` and `q4-tiled`: the 128 x 2 f32 and the 64 x 4 staged q4g128
 * layouts of the module doc.
 */
export type GemvLayout =
  | { kind: "lanes"; lanes: number; groups: number; unroll: number; reduce: readonly number[] }
  | { kind: "f32-wide" }
  | { kind: "q4-tiled" };

type LanesLayout = Extract<GemvLayout, { kind: "lanes" }>;

const lanes = (l: number, groups: number, unroll: number, reduce: number[]): GemvLayout => ({
  kind: "lanes",
  lanes: l,
  groups,
  unroll,
  reduce,
});

/**
 * Each format's layouts, by the weight's rows: a weight takes the first whose `minRows` it
 * reaches (the choice and its measurements are in the module doc).
 */
export const FUSED_GEMV_LAYOUTS: Readonly<Record<WeightFormat, readonly { minRows: number; layout: GemvLayout }[]>> = {
  f32: [{ minRows: 6144, layout: lanes(32, 4, 4, [32]) }, { minRows: 0, layout: { kind: "f32-wide" } }],
  q8: [
    { minRows: 6144, layout: lanes(32, 2, 2, [32]) },
    { minRows: 3072, layout: lanes(64, 2, 2, [8, 8]) },
    { minRows: 0, layout: lanes(128, 2, 1, [16, 8]) },
  ],
  q4g128: [{ minRows: 0, layout: { kind: "q4-tiled" } }],
};

/**
 * The layout of a fused product over a weight of `rows` rows (the whole weight's, for a weight
 * split into blocks: every block takes the same).
 *
 * @param format the weight's stored format
 * @param rows the weight's rows
 * @returns the first of {@link FUSED_GEMV_LAYOUTS}' entries for `format` whose `minRows` `rows` reaches
 */
export function fusedGemvLayout(format: WeightFormat, rows: number): GemvLayout {
  return FUSED_GEMV_LAYOUTS[format].find((e) => rows >= e.minRows)!.layout;
}

/**
 * Rows one workgroup of a layout computes (dispatch `ceil(rows / fusedGemvRows(layout))` workgroups).
 *
 * @param layout the layout
 * @returns its rows per workgroup
 */
export function fusedGemvRows(layout: GemvLayout): number {
  return layout.kind === "lanes" ? 4 * layout.groups : layout.kind === "f32-wide" ? 8 : 16;
}

/** The formats a `lanes` layout serves (q4g128 keeps its staged layout: the module doc says why). */
type LanesFormat = Exclude<WeightFormat, "q4g128">;

/** Columns of one chunk (a vec4 of the weight) and vec4s of x it needs, per format. */
const CHUNK: Record<LanesFormat, { cols: number; xs: number }> = {
  f32: { cols: 4, xs: 1 },
  q8: { cols: 16, xs: 4 },
};

/** `terms` summed pairwise. */
function pairwise(terms: string[]): string {
  if (terms.length === 1) return terms[0];
  const half = Math.ceil(terms.length / 2);
  return `(${pairwise(terms.slice(0, half))} + ${pairwise(terms.slice(half))})`;
}

/** Lines that load x's vec4 `index` as `name` (0 unless `live`), with `norm` its square summed and `g` applied. */
function xLoad(name: string, index: string, live: string | null, norm: boolean): string {
  const raw = live ? `select(vec4f(0.0), x[${index}], ${live})` : `x[${index}]`;
  if (!norm) return `      let ${name} = ${raw};`;
  return `      let ${name}_ = ${raw};
      ss = fma(${name}_.x, ${name}_.x, fma(${name}_.y, ${name}_.y, fma(${name}_.z, ${name}_.z, fma(${name}_.w, ${name}_.w, ss))));
      let ${name} = ${name}_ * g[${index}];`;
}

function lanesSource(format: LanesFormat, input: GemvInput, output: GemvOutput, l: LanesLayout): string {
  const norm = input === "norm";
  const { lanes: L, groups: G, unroll: U } = l;
  const { cols, xs } = CHUNK[format];
  const R = [0, 1, 2, 3];
  const steps = Array.from({ length: U }, (_, u) => u);
  const body: string[] = [];
  body.push(`    let chunks = k / ${cols}u; // weight vec4s per row
    let last = chunks - 1u;
${R.map((r) => `    let b${r} = r${r} * chunks;`).join("\n")}
    for (var i = lane; i < chunks; i += ${L * U}u) {`);
  for (const u of steps) body.push(`      let c${u} = i + ${u * L}u;\n      let l${u} = min(c${u}, last);`);
  for (const u of steps) for (const r of R) body.push(`      let w${u}${r} = weight[b${r} + l${u}];`);
  for (const u of steps) {
    const live = `c${u} < chunks`;
    for (let j = 0; j < xs; j++) body.push(xLoad(`x${u}${j}`, `${xs}u * l${u} + ${j}u`, live, norm));
    const xv = (j: number) => `x${u}${j}`;
    for (const r of R) {
      const w = `w${u}${r}`;
      if (format === "f32") body.push(`      a${r} = fma(${w}, ${xv(0)}, a${r});`);
      else {
        body.push(
          `      a${r} = fma(q8(${w}.w), ${xv(3)}, fma(q8(${w}.z), ${xv(2)}, fma(q8(${w}.y), ${
            xv(1)
          }, fma(q8(${w}.x), ${xv(0)}, a${r}))));`,
        );
      }
    }
  }
  body.push("    }");
  const chunkPath = body.join("\n");

  // q8 rows that do not start on a 16-byte boundary: a word (four codes) at a time.
  const wordPath = `    let words = k / 4u; // K % 4 == 0: no padding
${R.map((r) => `    let b${r} = r${r} * words;`).join("\n")}
    for (var j = lane; j < words; j += ${L}u) {
${xLoad("xv", "j", null, norm)}
${R.map((r) => `      a${r} = fma(q8(word(b${r} + j)), xv, a${r});`).join("\n")}
    }`;

  const hsum = (a: string) => `(${a}.x + ${a}.y) + (${a}.z + ${a}.w)`;
  // The reduction: stages of l.reduce, the last by one invocation per row group.
  const red: string[] = [];
  let span = L;
  for (const [s, f] of l.reduce.entries()) {
    const next = span / f;
    const at = (arr: string, j: number) => `${arr}[first + ${next === 1 ? "" : "lane + "}${j * next}u]`;
    const sum = (arr: string) => pairwise(Array.from({ length: f }, (_, j) => at(arr, j)));
    if (s < l.reduce.length - 1) {
      red.push(`  if (lane < ${next}u) {
    scratch[first + lane] = ${sum("scratch")};${norm ? `\n    squares[first + lane] = ${sum("squares")};` : ""}
  }
  workgroupBarrier();`);
    } else {
      const scale = format === "q8" ? " * vec4f(scales[r0], scales[r1], scales[r2], scales[r3])" : "";
      const f = norm ? ` * inverseSqrt(${sum("squares")} / f32(k) + p.eps)` : "";
      red.push(`  if (lane == 0u) {
    put(row, ${sum("scratch")}${scale}${f});
  }`);
    }
    span = next;
  }

  const decode = format === "q8" ? Q8_DECODE : "";
  const word = format === "q8" ? "fn word(e: u32) -> u32 { return weight[e / 4u][e % 4u]; }" : "";
  const paths = format === "f32"
    ? chunkPath
    : `  if (k % ${cols}u == 0u) {\n${chunkPath}\n  } else {\n${wordPath}\n  }`;
  return `${PARAMS}
${bindings(format, input)}
${outputFunction(output)}
${decode}
${word}
var<workgroup> scratch: array<vec4f, ${L * G}>; // the partial sums of four rows
${norm ? `var<workgroup> squares: array<f32, ${L * G}>; // the partial sums of x^2` : ""}

@compute @workgroup_size(${L}, ${G})
fn main(${MAIN_ARGS}) {
${start(L, G, false)}
  var a0 = vec4f(0.0);
  var a1 = vec4f(0.0);
  var a2 = vec4f(0.0);
  var a3 = vec4f(0.0);
  var ss = 0.0;
${paths}
  scratch[tid] = vec4f(${R.map((r) => hsum(`a${r}`)).join(", ")});
  ${norm ? "squares[tid] = ss;" : ""}
  workgroupBarrier();
${red.join("\n")}
}`;
}

/**
 * The WGSL of a fused decode product. Bindings in order: `weight`, `scales` (q8, q4g128), `x`,
 * `g` (the norm weight, with `norm`), `out`, and the params `[n, k, out0, eps]` (u32, u32, u32,
 * f32). One workgroup per {@link fusedGemvRows} rows.
 *
 * @param format the weight's stored format
 * @param input the product's input
 * @param output what it does with its result
 * @param layout the layout ({@link fusedGemvLayout} picks it from the weight's rows)
 * @returns the kernel source
 * @throws Error when `layout` is not one of `format`'s
 */
export function fusedGemvSource(
  format: WeightFormat,
  input: GemvInput,
  output: GemvOutput,
  layout: GemvLayout,
): string {
  if (layout.kind === "lanes") {
    const { lanes: l, groups, unroll, reduce } = layout;
    const pow2 = (v: number) => Number.isInteger(v) && v >= 1 && (v & (v - 1)) === 0;
    if (!pow2(l) || !pow2(groups) || l * groups > 256 || !Number.isInteger(unroll) || unroll < 1) {
      throw new Error(
        `fusedGemvSource: layout needs powers of two lanes and groups (at most 256 invocations) and unroll >= 1, got ${
          JSON.stringify(layout)
        }`,
      );
    }
    if (reduce.length === 0 || reduce.reduce((a, b) => a * b, 1) !== l || !reduce.every(pow2)) {
      throw new Error(
        `fusedGemvSource: layout.reduce must be powers of two multiplying to lanes, got ${JSON.stringify(layout)}`,
      );
    }
    if (format === "q4g128") throw new Error("fusedGemvSource: layout lanes is not one of format q4g128's");
    return lanesSource(format, input, output, layout);
  }
  if (layout.kind === "f32-wide" && format === "f32") return f32Source(input, output);
  if (layout.kind === "q4-tiled" && format === "q4g128") return q4Source(input, output);
  throw new Error(`fusedGemvSource: layout ${layout.kind} is not one of format ${format}'s`);
}
