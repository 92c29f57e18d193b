// matmul/q4g128: c = a @ dequant(weight)^T (F.linear), a is [M, K] f32, c is [M, N] f32, and the weight
// [N, K] is int4 in groups of 128 columns: weight is [N, ceil(K/8)] u32, eight two's-complement
// nibbles per word, least significant nibble first, and scales[n, g] (scales is [N, ceil(K/128)])
// scales columns 128g .. 128g + 127 of row n. c[m, n] = sum_k a[m, k] * code[n, k] * scales[n, k / 128].
//
// The tiling is matmul/kernel's, with the weight in b's place (see kernel.wgsl for the design and
// why): each workgroup computes one 128 x 128 tile of c; each of its 256 invocations owns 8 x 8
// outputs in sixteen named vec4 accumulators, function-local variables of main, rows 4ty..4ty+3 and
// 64+4ty..64+4ty+3 and columns 4tx..4tx+3 and 64+4tx..64+4tx+3 for (tx, ty) = (lid % 16, lid / 16).
// K is walked 16 at a time through one stage of workgroup memory (16 KiB): loads, stores, a
// barrier, the 16 k-steps written out inline in main, a barrier.
//
// The weight is decoded as it is staged (two half-words, eight codes, per invocation per block; no
// separate dequantize pass), transposed into the same layout as b's. A block of 16 columns never
// straddles a group of 128, so each staged value is code * its group's scale, rounded once to f32.
// Codes in the padding of a row's last word (k >= K) stage as zeros. a is read a vec4 at a time when
// K % 4 == 0 and c written so when N % 4 == 0, element by element otherwise. Every guard is in the
// staging loads and the final stores, none in the k-steps: loads outside the operands stage zeros and
// stores outside c are skipped, so every M, N, K >= 1 works. Tiles beyond 65,535 fold into y:
// tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<u32>;
@group(0) @binding(2) var<storage, read> scales: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<vec4f>;
@group(0) @binding(4) var<uniform> params: Params;

const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 16u; // columns of a (rows of the weight's transpose) per block
const LANES = 32u; // vec4s across 128 rows or columns
const HALF = 16u; // vec4 offset of the bottom rows / right columns: 64 / 4
const GROUP = 128u; // columns of a weight row per scale

// a_t[k * LANES + i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// b_s[k * LANES + j] holds the decoded weight at rows col0 + 4j .. 4j + 3, column k0 + k.
var<workgroup> a_t: array<vec4f, STEP * LANES>;
var<workgroup> b_s: array<vec4f, STEP * LANES>;

// #include "load_a.wgsl"

// #include "q4_load_word_scale.wgsl"

// Codes k .. k + 3 of a row (the low or the high half of its word, k % 8 telling which) as f32 (each
// nibble sign-extended by shifting it to the top of an i32 and back), times the group's scale, with
// the padding past K as zeros.
fn decode(word: u32, k: u32, scale: f32) -> vec4f {
  let shifts = select(vec4u(28u, 24u, 20u, 16u), vec4u(12u, 8u, 4u, 0u), k % 8u == 4u);
  let codes = vec4f((vec4i(bitcast<i32>(word)) << shifts) >> vec4u(28u));
  return select(vec4f(0.0), codes * scale, vec4u(k) + vec4u(0u, 1u, 2u, 3u) < vec4u(params.k));
}

// #include "store_c.wgsl"

// #include "gemm_stage_t.wgsl"

// #include "stage_w.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile128_origin.wgsl"

// #include "gemm_acc8x8.wgsl"

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    // All the loads before any store, so that they are in flight together.
    let a_top = load_a(row0 + a_row, k0 + a_k);
    let a_bottom = load_a(row0 + a_row + 64u, k0 + a_k);
    let w_top = load_word(col0 + a_row, k0 + a_k);
    let w_bottom = load_word(col0 + a_row + 64u, k0 + a_k);
    let s_top = load_scale(col0 + a_row, k0 + a_k);
    let s_bottom = load_scale(col0 + a_row + 64u, k0 + a_k);
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 64u, a_k, a_bottom);
    stage_w(a_row, a_k, decode(w_top, k0 + a_k, s_top));
    stage_w(a_row + 64u, a_k, decode(w_bottom, k0 + a_k, s_bottom));
    workgroupBarrier();
// #include "k_steps128.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }

// #include "tile128_store.wgsl"
}
