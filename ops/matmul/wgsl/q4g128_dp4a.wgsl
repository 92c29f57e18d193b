// matmul/q4g128_dp4a: c = dequant(a) @ dequant(weight)^T on integer dot products. a [M, K] is int8
// codes four to a u32 (least significant byte first, two's complement), [M, ceil(K/4)] words, with
// one f32 scale per row, a_scales[m] (ops/quantize's `packed` writes it from f32 activations); the
// weight [N, K] is ops/matvec's q4 group-128 format: [N, ceil(K/8)] u32, eight two's-complement
// nibbles per word, least significant first, and scales[n, g] ([N, ceil(K/128)]) for columns
// 128g .. 128g + 127 of row n.
// c[m, n] = (sum_g f32(sum_{k in g} code_a[m, k] code_w[n, k]) * scales[n, g]) * a_scales[m], the
// groups summed in f32 in order of g, c [M, N] f32.
//
// q8row_dp4a's 128 x 128 tile and walk (q8row_dp4a.wgsl says the design); each q4 word is widened
// while it is staged into two words of four int8 codes (pack4xI8 of the sign-extended nibbles). A
// group is two steps of 64 codes: its sums are taken in i32 by dot4I8Packed, exact, and after its
// second step (or the last step of K) scaled by the group's scales into f32 sums; the activation
// scale is applied once per output at the end. Needs WGSL's packed_4x8_integer_dot_product (mod.ts
// refuses the plan where it is missing).

// #include "params.wgsl"

// #include "dp4a_bindings.wgsl"

const GROUP = 128u; // columns per scale: two steps of the walk (4 * STEP each)

// #include "dp4a_tile128.wgsl"

// #include "dp4a_ops.wgsl"

// #include "dp4a_q4_loads.wgsl"

// #include "store_c_scalar.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup.wgsl"

  let left_col = col0 + tx * 4u;
  let right_col = left_col + 64u;
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
  var sum_left0 = vec4f(0.0);
  var sum_right0 = vec4f(0.0);
  var sum_left1 = vec4f(0.0);
  var sum_right1 = vec4f(0.0);
  var sum_left2 = vec4f(0.0);
  var sum_right2 = vec4f(0.0);
  var sum_left3 = vec4f(0.0);
  var sum_right3 = vec4f(0.0);
  var sum_left4 = vec4f(0.0);
  var sum_right4 = vec4f(0.0);
  var sum_left5 = vec4f(0.0);
  var sum_right5 = vec4f(0.0);
  var sum_left6 = vec4f(0.0);
  var sum_right6 = vec4f(0.0);
  var sum_left7 = vec4f(0.0);
  var sum_right7 = vec4f(0.0);
  for (var k0w = 0u; k0w < words; k0w += STEP) {
// #include "dp4a_stage_a.wgsl"
    // STAGE_WORDS / 2 q4 words of the weight row, each widened to two words of four int8 codes.
    for (var j = 0u; j < STAGE_WORDS; j += 2u) {
      let q4 = vec4i(bitcast<i32>(load_weight(col0 + stage_row, (k0w + stage_w + j) / 2u)));
      let slot = (stage_w + j) * LANES + stage_row / 4u;
      w_t[slot][stage_row % 4u] = pack4xI8((q4 << vec4u(28u, 24u, 20u, 16u)) >> vec4u(28u));
      w_t[slot + LANES][stage_row % 4u] = pack4xI8((q4 << vec4u(12u, 8u, 4u, 0u)) >> vec4u(28u));
    }
// #include "dp4a_multiply128.wgsl"
    // The end of a group (every second step) or of K: its sums scaled into the f32 sums.
    if ((k0w + STEP) % (GROUP / 4u) == 0u || k0w + STEP >= words) {
      let g = k0w / (GROUP / 4u);
      let left_scales = load_group_scales(left_col, g);
      let right_scales = load_group_scales(right_col, g);
      sum_left0 += vec4f(left0) * left_scales;
      sum_right0 += vec4f(right0) * right_scales;
      left0 = vec4i(0);
      right0 = vec4i(0);
      sum_left1 += vec4f(left1) * left_scales;
      sum_right1 += vec4f(right1) * right_scales;
      left1 = vec4i(0);
      right1 = vec4i(0);
      sum_left2 += vec4f(left2) * left_scales;
      sum_right2 += vec4f(right2) * right_scales;
      left2 = vec4i(0);
      right2 = vec4i(0);
      sum_left3 += vec4f(left3) * left_scales;
      sum_right3 += vec4f(right3) * right_scales;
      left3 = vec4i(0);
      right3 = vec4i(0);
      sum_left4 += vec4f(left4) * left_scales;
      sum_right4 += vec4f(right4) * right_scales;
      left4 = vec4i(0);
      right4 = vec4i(0);
      sum_left5 += vec4f(left5) * left_scales;
      sum_right5 += vec4f(right5) * right_scales;
      left5 = vec4i(0);
      right5 = vec4i(0);
      sum_left6 += vec4f(left6) * left_scales;
      sum_right6 += vec4f(right6) * right_scales;
      left6 = vec4i(0);
      right6 = vec4i(0);
      sum_left7 += vec4f(left7) * left_scales;
      sum_right7 += vec4f(right7) * right_scales;
      left7 = vec4i(0);
      right7 = vec4i(0);
    }
  }

  let top = row0 + ty * 4u;
  let bottom = top + 64u;
  let a_scale0 = load_a_scale(top);
  let a_scale1 = load_a_scale(top + 1u);
  let a_scale2 = load_a_scale(top + 2u);
  let a_scale3 = load_a_scale(top + 3u);
  let a_scale4 = load_a_scale(bottom);
  let a_scale5 = load_a_scale(bottom + 1u);
  let a_scale6 = load_a_scale(bottom + 2u);
  let a_scale7 = load_a_scale(bottom + 3u);
  store_c(top, left_col, sum_left0 * a_scale0);
  store_c(top, right_col, sum_right0 * a_scale0);
  store_c(top + 1u, left_col, sum_left1 * a_scale1);
  store_c(top + 1u, right_col, sum_right1 * a_scale1);
  store_c(top + 2u, left_col, sum_left2 * a_scale2);
  store_c(top + 2u, right_col, sum_right2 * a_scale2);
  store_c(top + 3u, left_col, sum_left3 * a_scale3);
  store_c(top + 3u, right_col, sum_right3 * a_scale3);
  store_c(bottom, left_col, sum_left4 * a_scale4);
  store_c(bottom, right_col, sum_right4 * a_scale4);
  store_c(bottom + 1u, left_col, sum_left5 * a_scale5);
  store_c(bottom + 1u, right_col, sum_right5 * a_scale5);
  store_c(bottom + 2u, left_col, sum_left6 * a_scale6);
  store_c(bottom + 2u, right_col, sum_right6 * a_scale6);
  store_c(bottom + 3u, left_col, sum_left7 * a_scale7);
  store_c(bottom + 3u, right_col, sum_right7 * a_scale7);
}
