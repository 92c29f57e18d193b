// matmul/q8row_dp4a: c = dequant(a) @ dequant(weight)^T on integer dot products. Both operands are
// int8 codes, four to a u32 (least significant byte first, two's complement), one f32 scale per
// row: a [M, K] is [M, ceil(K/4)] words with a_scales[m] (ops/quantize's `packed` writes it from f32
// activations), the weight [N, K] is ops/matvec's q8 format, [N, ceil(K/4)] words with scales[n].
// c[m, n] = (f32(sum_k code_a[m, k] code_w[n, k]) * a_scales[m]) * scales[n], c [M, N] f32.
//
// The sum is taken by dot4I8Packed (WGSL's packed_4x8_integer_dot_product; mod.ts refuses the plan
// where the language feature is missing) into i32, exact: K is at most 131,071, so no sum of
// products of int8 codes overflows. A 64 x 64 tile of c per workgroup of 128 invocations, 8 x 4
// outputs per invocation in eight vec4i sums, K walked 32 words (128 codes) at a time through 16 KiB
// of workgroup memory holding both blocks as words, transposed so one vec4u read gives a word of four
// rows: per word of K, three vec4u reads feed 32 dot4I8Packed (with 4 x 4 outputs, two reads fed 16,
// and workgroup memory would set the pace at the H200's DP4a rate). Codes of a past K in a row's last
// word are masked to zero,
// so the weight's padding adds nothing. Loads outside the operands stage zeros and stores outside c
// are skipped, so every M, N and K in range works. Tiles beyond 65,535 fold into y:
// tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> a_scales: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<u32>;
@group(0) @binding(3) var<storage, read> scales: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;
@group(0) @binding(5) var<uniform> params: Params;

// #include "dp4a_decls.wgsl"

// #include "store_c_scalar.wgsl"

// Word w of weight row n, or 0 outside the weight.
fn load_weight(n: u32, w: u32) -> u32 {
  let words = (params.k + 3u) / 4u;
  if (n < params.n && w < words) {
    return weight[n * words + w];
  }
  return 0u;
}

// Row n's scale, or 0 outside the weight.
fn load_scale(n: u32) -> f32 {
  if (n < params.n) {
    return scales[n];
  }
  return 0.0;
}

// Row m's activation scale, or 0 outside a.
fn load_a_scale(m: u32) -> f32 {
  if (m < params.m) {
    return a_scales[m];
  }
  return 0.0;
}

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup.wgsl"

  var isum0 = vec4i(0);
  var isum1 = vec4i(0);
  var isum2 = vec4i(0);
  var isum3 = vec4i(0);
  var isum4 = vec4i(0);
  var isum5 = vec4i(0);
  var isum6 = vec4i(0);
  var isum7 = vec4i(0);
  for (var k0w = 0u; k0w < words; k0w += STEP) {
// #include "dp4a_stage_a.wgsl"
    for (var j = 0u; j < 16u; j++) {
      w_t[(stage_w + j) * LANES + stage_row / 4u][stage_row % 4u] = load_weight(col0 + stage_row, k0w + stage_w + j);
    }
// #include "dp4a_multiply.wgsl"
  }

  let top = row0 + ty * 4u;
  let bottom = top + 32u;
  let col = col0 + tx * 4u;
  let col_scales = vec4f(load_scale(col), load_scale(col + 1u), load_scale(col + 2u), load_scale(col + 3u));
  store_c(top, col, vec4f(isum0) * load_a_scale(top) * col_scales);
  store_c(top + 1u, col, vec4f(isum1) * load_a_scale(top + 1u) * col_scales);
  store_c(top + 2u, col, vec4f(isum2) * load_a_scale(top + 2u) * col_scales);
  store_c(top + 3u, col, vec4f(isum3) * load_a_scale(top + 3u) * col_scales);
  store_c(bottom, col, vec4f(isum4) * load_a_scale(bottom) * col_scales);
  store_c(bottom + 1u, col, vec4f(isum5) * load_a_scale(bottom + 1u) * col_scales);
  store_c(bottom + 2u, col, vec4f(isum6) * load_a_scale(bottom + 2u) * col_scales);
  store_c(bottom + 3u, col, vec4f(isum7) * load_a_scale(bottom + 3u) * col_scales);
}
