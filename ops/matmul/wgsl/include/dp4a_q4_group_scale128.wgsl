// The end of a group of 128 codes (two steps, or the last step of K) in the 128 x 128 q4 dp4a tiles
// (dp4a_q4_product128.wgsl and its _pipelined form): each i32 sum left0-7 and right0-7
// (dp4a_sums128.wgsl) converted to f32, times the group's scales of its columns, added into the f32
// sums acc0_left .. acc7_right (gemm_acc8x8.wgsl), and reset. One text for both walks over K, so
// their outputs are the same bit for bit. Needs left_scales and right_scales (vec4f: the group's
// scales of columns left_n .. left_n + 3 and right_n .. right_n + 3).
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
