// matmul/q8row_dp4a: c = dequant(a) @ dequant(weight)^T on integer dot products. Both operands are
// int8 codes, four to a u32 (least significant byte first, two's complement), one f32 scale per row:
// a [M, K] is [M, ceil(K/4)] words with a_scales[m] (ops/quantize's `packed` writes it from f32
// activations), the weight [N, K] is ops/matvec's q8 format, [N, ceil(K/4)] words with scales[n].
// c[m, n] = (f32(sum_k code_a[m, k] code_w[n, k]) * a_scales[m]) * scales[n], c [M, N] f32.
//
// The sum is taken by dot4I8Packed (WGSL's packed_4x8_integer_dot_product; mod.ts refuses the plan
// where the language feature is missing) into i32, exact: K is at most 131,071, so no sum of
// products of int8 codes overflows. The 128 x 128 tile, for problems large enough to keep a GPU busy
// with it (q8row_dp4a_tile64 otherwise): 256 invocations per workgroup, 8 x 8 outputs each in sixteen
// vec4i sums, K walked 16 words (64 codes) at a time through 16 KiB of workgroup memory holding both
// blocks as words, transposed so that one vec4u read gives a word of four rows: per word of K, four
// vec4u reads feed 64 dot4I8Packed. Codes of a past K in a row's last word are masked to zero, so the
// weight's padding adds nothing. Loads outside the operands stage zeros and stores outside c are
// skipped, so every M, N and K in range works. Tiles beyond 65,535 fold into y:
// tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "params.wgsl"

// #include "dp4a_bindings.wgsl"

// #include "dp4a_tile128.wgsl"

// #include "dp4a_ops.wgsl"

// #include "dp4a_q8_loads.wgsl"

// #include "store_c_scalar.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup.wgsl"

  var left0 = vec4i(0);
  var right0 = vec4i(0);
  var left1 = vec4i(0);
  var right1 = vec4i(0);
  var left2 = vec4i(0);
  var right2 = vec4i(0);
  var left3 = vec4i(0);
  var right3 = vec4i(0);
  var left4 = vec4i(0);
  var right4 = vec4i(0);
  var left5 = vec4i(0);
  var right5 = vec4i(0);
  var left6 = vec4i(0);
  var right6 = vec4i(0);
  var left7 = vec4i(0);
  var right7 = vec4i(0);
  for (var k0w = 0u; k0w < words; k0w += STEP) {
// #include "dp4a_stage_a.wgsl"
    for (var j = 0u; j < STAGE_WORDS; j++) {
      let slot = (stage_w + j) * LANES + stage_row / 4u;
      w_t[slot][stage_row % 4u] = load_weight(col0 + stage_row, k0w + stage_w + j);
    }
// #include "dp4a_multiply128.wgsl"
  }

  let top = row0 + ty * 4u;
  let bottom = top + 64u;
  let left_col = col0 + tx * 4u;
  let right_col = left_col + 64u;
  let left_scales = load_scales(left_col);
  let right_scales = load_scales(right_col);
  let a_scale0 = load_a_scale(top);
  let a_scale1 = load_a_scale(top + 1u);
  let a_scale2 = load_a_scale(top + 2u);
  let a_scale3 = load_a_scale(top + 3u);
  let a_scale4 = load_a_scale(bottom);
  let a_scale5 = load_a_scale(bottom + 1u);
  let a_scale6 = load_a_scale(bottom + 2u);
  let a_scale7 = load_a_scale(bottom + 3u);
  store_c(top, left_col, vec4f(left0) * a_scale0 * left_scales);
  store_c(top, right_col, vec4f(right0) * a_scale0 * right_scales);
  store_c(top + 1u, left_col, vec4f(left1) * a_scale1 * left_scales);
  store_c(top + 1u, right_col, vec4f(right1) * a_scale1 * right_scales);
  store_c(top + 2u, left_col, vec4f(left2) * a_scale2 * left_scales);
  store_c(top + 2u, right_col, vec4f(right2) * a_scale2 * right_scales);
  store_c(top + 3u, left_col, vec4f(left3) * a_scale3 * left_scales);
  store_c(top + 3u, right_col, vec4f(right3) * a_scale3 * right_scales);
  store_c(bottom, left_col, vec4f(left4) * a_scale4 * left_scales);
  store_c(bottom, right_col, vec4f(right4) * a_scale4 * right_scales);
  store_c(bottom + 1u, left_col, vec4f(left5) * a_scale5 * left_scales);
  store_c(bottom + 1u, right_col, vec4f(right5) * a_scale5 * right_scales);
  store_c(bottom + 2u, left_col, vec4f(left6) * a_scale6 * left_scales);
  store_c(bottom + 2u, right_col, vec4f(right6) * a_scale6 * right_scales);
  store_c(bottom + 3u, left_col, vec4f(left7) * a_scale7 * left_scales);
  store_c(bottom + 3u, right_col, vec4f(right7) * a_scale7 * right_scales);
}
