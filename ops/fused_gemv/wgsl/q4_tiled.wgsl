// fused_gemv/q4_tiled: out (op)= act(W · in(x)) for a q4g128 weight (matvec's q4g128 format: [n,
// ceil(k/8)] words, a scale per row and group of 128 columns): 64 invocations across K, four row groups
// (16 rows a workgroup), two vec4<u32> of each row in flight, in(x) staged through workgroup memory in
// tiles of 4,096 columns (swizzled against bank conflicts) that the row groups share, as
// q4g128.nvidia does; each vec4<u32>'s dot product scaled by its group's scale; a tree of halvings.
// The tile fills WebGPU's default 16 KiB of workgroup memory, so the sums of squares are reduced in
// the x components of the tile's vec4s after the partial sums'. Rows not starting on a 32-byte
// boundary (k % 32 != 0) read a word at a time, and the last word, half padding when k % 8 == 4, with
// the padding's activations taken as 0.
// #include "io.wgsl"
@group(0) @binding(0) var<storage, read> weight: array<vec4u>;
@group(0) @binding(1) var<storage, read> scales: array<f32>;
@group(0) @binding(2) var<storage, read> x: array<vec4f>;
@group(0) @binding(3) var<storage, read> g: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<uniform> p: P;
// #include "tree_input.wgsl"
const MASK = vec4u(0xfu, 0xf0u, 0xf00u, 0xf000u);
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
}
fn word(e: u32) -> u32 { return weight[e / 4u][e % 4u]; }
const TILE = 128u; // vec4<u32> of each row per tile (4096 columns), two per invocation
// The input's tile (8 vec4s for each of the tile's TILE vec4<u32>), then the partial sums and the
// sums of squares.
var<workgroup> scratch: array<vec4f, 8u * TILE>;

@compute @workgroup_size(64, 4)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  let lane = lid.x;
  let tid = lid.y * 64u + lane;
  let n = p.n;
  let k = p.k;
  let row = ((wid.x + wid.y * nwg.x) * 4u + lid.y) * 4u;
  let r0 = min(row, n - 1u);
  let r1 = min(row + 1u, n - 1u);
  let r2 = min(row + 2u, n - 1u);
  let r3 = min(row + 3u, n - 1u);
  let first = lid.y * 64u;
  var ss = 0.0;
  if (NORM) { ss = sum_squares(tid); }
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
  if (NORM) { scratch[256u + tid] = vec4f(ss, 0.0, 0.0, 0.0); }
  workgroupBarrier();
  if (lane < 32u) { scratch[first + lane] += scratch[first + lane + 32u]; if (NORM) { scratch[256u + first + lane].x += scratch[256u + first + lane + 32u].x; } }
  workgroupBarrier();
  if (lane < 16u) { scratch[first + lane] += scratch[first + lane + 16u]; if (NORM) { scratch[256u + first + lane].x += scratch[256u + first + lane + 16u].x; } }
  workgroupBarrier();
  if (lane < 8u) { scratch[first + lane] += scratch[first + lane + 8u]; if (NORM) { scratch[256u + first + lane].x += scratch[256u + first + lane + 8u].x; } }
  workgroupBarrier();
  if (lane < 4u) { scratch[first + lane] += scratch[first + lane + 4u]; if (NORM) { scratch[256u + first + lane].x += scratch[256u + first + lane + 4u].x; } }
  workgroupBarrier();
  if (lane < 2u) { scratch[first + lane] += scratch[first + lane + 2u]; if (NORM) { scratch[256u + first + lane].x += scratch[256u + first + lane + 2u].x; } }
  workgroupBarrier();
  if (lane < 1u) { scratch[first + lane] += scratch[first + lane + 1u]; if (NORM) { scratch[256u + first + lane].x += scratch[256u + first + lane + 1u].x; } }
  workgroupBarrier();
  var f = 1.0;
  if (NORM) { f = inverseSqrt((scratch[256u + 0u].x + scratch[256u + 64u].x + scratch[256u + 128u].x + scratch[256u + 192u].x) / f32(p.k) + p.eps); }
  if (lane == 0u) { put(row, scratch[first] * f); }
}