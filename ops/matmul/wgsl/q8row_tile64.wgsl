// matmul/q8row_tile64: c = a @ dequant(weight)^T (F.linear), a is [M, K] f32, c is [M, N] f32, and the
// weight [N, K] is int8: weight is [N, ceil(K/4)] u32, four two's-complement codes per word, least
// significant byte first, and scales[n] is row n's scale.
// c[m, n] = scales[n] * sum_k a[m, k] * code[n, k].
//
// The 64 x 64 tile, for problems too small to keep a GPU busy with q8row's 128 x 128 tiles (prefill
// of a short prompt): a 64 x 64 tile of c per workgroup, 4 x 4 outputs per invocation in four named
// vec4 accumulators, K walked 16 at a time with a's block staged transposed. The weight is
// decoded while it is staged (one word, four codes, per invocation per step; no separate dequantize
// pass): the codes are exact in f32, so the sum is of a times the codes, and each output is scaled
// once at the end. Codes in the padding of a row's last word (k >= K) stage as zeros. Loads outside
// the operands stage zeros and stores outside c are skipped, so every M, N, K >= 1 works. Tiles
// beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<u32>;
@group(0) @binding(2) var<storage, read> scales: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

// The geometry and the (single) stages of the 64 x 64 quantized tiles (q8row_tile64, q4g128_tile64).
const TILE = 64u;
const STEP = 16u; // columns of a and of the weight staged at a time
const LANES = 16u; // vec4s across one tile row: TILE / 4

// a_t[k * LANES + i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// w_t[k * LANES + j] holds the decoded weight at rows col0 + 4j .. 4j + 3, column k0 + k.
var<workgroup> a_t: array<vec4f, STEP * LANES>;
var<workgroup> w_t: array<vec4f, STEP * LANES>;

// #include "load_a_scalar.wgsl"

// #include "q8_load_word.wgsl"

// #include "q8_load_scale.wgsl"

// #include "store_c_scalar.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile64_q_setup.wgsl"

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    let word = bitcast<i32>(load_word(col0 + stage_row, k0 + stage_k));
    for (var j = 0u; j < 4u; j++) {
      let k = k0 + stage_k + j;
      let slot = (stage_k + j) * LANES + stage_row / 4u;
      a_t[slot][stage_row % 4u] = load_a(row0 + stage_row, k);
      w_t[slot][stage_row % 4u] = select(0.0, f32(extractBits(word, 8u * j, 8u)), k < params.k);
    }
// #include "tile64_q_multiply.wgsl"
  }

  let row = row0 + ty * 4u;
  let col = col0 + tx * 4u;
  let col_scales = vec4f(load_scale(col), load_scale(col + 1u), load_scale(col + 2u), load_scale(col + 3u));
  store_c(row, col, acc0 * col_scales);
  store_c(row + 1u, col, acc1 * col_scales);
  store_c(row + 2u, col, acc2 * col_scales);
  store_c(row + 3u, col, acc3 * col_scales);
}
