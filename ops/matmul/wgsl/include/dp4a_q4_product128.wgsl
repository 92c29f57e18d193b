// The product of the 128 x 128 q4 dp4a tiles (q4g128_dp4a, q4g128_dp4a_fused), after
// dp4a_setup.wgsl: K walked into the i32 sums left0-7 and right0-7 (dp4a_multiply128.wgsl), each
// group's sums (two steps, or the last step of K) converted to f32, times the group's scales, added
// into the f32 sums acc0_left .. acc7_right (gemm_acc8x8.wgsl's names and layout: rows 4ty..4ty+3 and
// 64+4ty..64+4ty+3, columns 4tx..4tx+3 and 64+4tx..64+4tx+3 of the tile), and at the end those times
// the activation scale a_scales[m]: the finished outputs, which tile128_epilogue.wgsl and
// tile128_store.wgsl read. Needs dp4a_setup.wgsl's names, dp4a_tile128.wgsl, dp4a_ops.wgsl,
// dp4a_q4_loads.wgsl and the kernel's GROUP.
  let left_n = col0 + tx * 4u; // the first of the weight rows (output columns) of the left sums
  let right_n = left_n + 64u;
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
// #include "gemm_acc8x8.wgsl"
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
      let left_scales = load_group_scales(left_n, g);
      let right_scales = load_group_scales(right_n, g);
      acc0_left += vec4f(left0) * left_scales;
      acc0_right += vec4f(right0) * right_scales;
      left0 = vec4i(0);
      right0 = vec4i(0);
      acc1_left += vec4f(left1) * left_scales;
      acc1_right += vec4f(right1) * right_scales;
      left1 = vec4i(0);
      right1 = vec4i(0);
      acc2_left += vec4f(left2) * left_scales;
      acc2_right += vec4f(right2) * right_scales;
      left2 = vec4i(0);
      right2 = vec4i(0);
      acc3_left += vec4f(left3) * left_scales;
      acc3_right += vec4f(right3) * right_scales;
      left3 = vec4i(0);
      right3 = vec4i(0);
      acc4_left += vec4f(left4) * left_scales;
      acc4_right += vec4f(right4) * right_scales;
      left4 = vec4i(0);
      right4 = vec4i(0);
      acc5_left += vec4f(left5) * left_scales;
      acc5_right += vec4f(right5) * right_scales;
      left5 = vec4i(0);
      right5 = vec4i(0);
      acc6_left += vec4f(left6) * left_scales;
      acc6_right += vec4f(right6) * right_scales;
      left6 = vec4i(0);
      right6 = vec4i(0);
      acc7_left += vec4f(left7) * left_scales;
      acc7_right += vec4f(right7) * right_scales;
      left7 = vec4i(0);
      right7 = vec4i(0);
    }
  }

  {
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
    acc0_left *= a_scale0;
    acc0_right *= a_scale0;
    acc1_left *= a_scale1;
    acc1_right *= a_scale1;
    acc2_left *= a_scale2;
    acc2_right *= a_scale2;
    acc3_left *= a_scale3;
    acc3_right *= a_scale3;
    acc4_left *= a_scale4;
    acc4_right *= a_scale4;
    acc5_left *= a_scale5;
    acc5_right *= a_scale5;
    acc6_left *= a_scale6;
    acc6_right *= a_scale6;
    acc7_left *= a_scale7;
    acc7_right *= a_scale7;
  }
