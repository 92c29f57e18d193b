// The end of the 128 x 128 q8 dp4a tiles' product (dp4a_q8_product128.wgsl and its _pipelined
// form): each i32 sum left0-7 and right0-7 (dp4a_sums128.wgsl) converted to f32 and scaled,
// (f32(sum) * a_scales[m]) * scales[n], into the finished outputs acc0_left .. acc7_right, in
// gemm_acc8x8.wgsl's names and layout, which tile128_epilogue.wgsl and tile128_store.wgsl read. One
// text for both walks over K, so their outputs are the same bit for bit. Needs dp4a_setup.wgsl's
// names, dp4a_ops.wgsl and dp4a_q8_loads.wgsl; the rows' scales from dp4a_a_scales128.wgsl.
  let left_scales = load_scales(col0 + tx * 4u);
  let right_scales = load_scales(col0 + tx * 4u + 64u);
// #include "dp4a_a_scales128.wgsl"
  var acc0_left = vec4f(left0) * a_scale0 * left_scales;
  var acc0_right = vec4f(right0) * a_scale0 * right_scales;
  var acc1_left = vec4f(left1) * a_scale1 * left_scales;
  var acc1_right = vec4f(right1) * a_scale1 * right_scales;
  var acc2_left = vec4f(left2) * a_scale2 * left_scales;
  var acc2_right = vec4f(right2) * a_scale2 * right_scales;
  var acc3_left = vec4f(left3) * a_scale3 * left_scales;
  var acc3_right = vec4f(right3) * a_scale3 * right_scales;
  var acc4_left = vec4f(left4) * a_scale4 * left_scales;
  var acc4_right = vec4f(right4) * a_scale4 * right_scales;
  var acc5_left = vec4f(left5) * a_scale5 * left_scales;
  var acc5_right = vec4f(right5) * a_scale5 * right_scales;
  var acc6_left = vec4f(left6) * a_scale6 * left_scales;
  var acc6_right = vec4f(right6) * a_scale6 * right_scales;
  var acc7_left = vec4f(left7) * a_scale7 * left_scales;
  var acc7_right = vec4f(right7) * a_scale7 * right_scales;
