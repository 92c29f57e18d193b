// matmul/q8row: c = a @ dequant(weight)^T (F.linear), a is [M, K] f32, c is [M, N] f32, and the weight
// [N, K] is int8: weight is [N, ceil(K/4)] u32, four two's-complement codes per word, least
// significant byte first, and scales[n] is row n's scale. c[m, n] = scales[n] * sum_k a[m, k] * code[n, k].
//
// The tiling is matmul/kernel's, with the weight in b's place (see kernel.wgsl for the design and
// why): each workgroup computes one 128 x 128 tile of c; each of its 256 invocations owns 8 x 8
// outputs in sixteen named vec4 accumulators, function-local variables of main, rows 4ty..4ty+3 and
// 64+4ty..64+4ty+3 and columns 4tx..4tx+3 and 64+4tx..64+4tx+3 for (tx, ty) = (lid % 16, lid / 16).
// K is walked 16 at a time through one stage of workgroup memory (16 KiB): loads, stores, a
// barrier, the 16 k-steps written out inline in main, a barrier.
//
// The weight is decoded as it is staged (two words, eight codes, per invocation per block; no
// separate dequantize pass), transposed into the same layout as b's: the codes are exact in f32, so
// the sum is of a times the codes, and each output is scaled once at the end. Codes in the padding
// of a row's last word (k >= K) stage as zeros. a is read a vec4 at a time when K % 4 == 0 and c
// written so when N % 4 == 0, element by element otherwise. Every guard is in the staging loads and
// the final stores, none in the k-steps: loads outside the operands stage zeros and stores outside c
// are skipped, so every M, N, K >= 1 works. Tiles beyond 65,535 fold into y:
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

// a_t[k * LANES + i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// b_s[k * LANES + j] holds the decoded weight at rows col0 + 4j .. 4j + 3, column k0 + k.
var<workgroup> a_t: array<vec4f, STEP * LANES>;
var<workgroup> b_s: array<vec4f, STEP * LANES>;

// #include "load_a.wgsl"

// #include "q8_load_word.wgsl"

// Codes k .. k + 3 of a word as f32 (each byte sign-extended by shifting it to the top of an i32
// and back), with the padding past K as zeros.
fn decode(word: u32, k: u32) -> vec4f {
  let codes = vec4f((vec4i(bitcast<i32>(word)) << vec4u(24u, 16u, 8u, 0u)) >> vec4u(24u));
  return select(vec4f(0.0), codes, vec4u(k) + vec4u(0u, 1u, 2u, 3u) < vec4u(params.k));
}

// #include "q8_load_scale.wgsl"

// The scales of output columns col .. col + 3.
fn load_scales(col: u32) -> vec4f {
  return vec4f(load_scale(col), load_scale(col + 1u), load_scale(col + 2u), load_scale(col + 3u));
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
    // All four loads before any store, so that they are in flight together.
    let a_top = load_a(row0 + a_row, k0 + a_k);
    let a_bottom = load_a(row0 + a_row + 64u, k0 + a_k);
    let w_top = load_word(col0 + a_row, k0 + a_k);
    let w_bottom = load_word(col0 + a_row + 64u, k0 + a_k);
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 64u, a_k, a_bottom);
    stage_w(a_row, a_k, decode(w_top, k0 + a_k));
    stage_w(a_row + 64u, a_k, decode(w_bottom, k0 + a_k));
    workgroupBarrier();
// #include "k_steps128.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }

  // The accumulators times their columns' scales, stored as tile128_store.wgsl stores them unscaled.
  let top_row = row0 + ty * 4u;
  let bottom_row = top_row + 64u;
  let left_col = col0 + tx * 4u;
  let right_col = left_col + 64u;
  let left_scales = load_scales(left_col);
  let right_scales = load_scales(right_col);
  store_c(top_row, left_col, acc0_left * left_scales);
  store_c(top_row, right_col, acc0_right * right_scales);
  store_c(top_row + 1u, left_col, acc1_left * left_scales);
  store_c(top_row + 1u, right_col, acc1_right * right_scales);
  store_c(top_row + 2u, left_col, acc2_left * left_scales);
  store_c(top_row + 2u, right_col, acc2_right * right_scales);
  store_c(top_row + 3u, left_col, acc3_left * left_scales);
  store_c(top_row + 3u, right_col, acc3_right * right_scales);
  store_c(bottom_row, left_col, acc4_left * left_scales);
  store_c(bottom_row, right_col, acc4_right * right_scales);
  store_c(bottom_row + 1u, left_col, acc5_left * left_scales);
  store_c(bottom_row + 1u, right_col, acc5_right * right_scales);
  store_c(bottom_row + 2u, left_col, acc6_left * left_scales);
  store_c(bottom_row + 2u, right_col, acc6_right * right_scales);
  store_c(bottom_row + 3u, left_col, acc7_left * left_scales);
  store_c(bottom_row + 3u, right_col, acc7_right * right_scales);
}
