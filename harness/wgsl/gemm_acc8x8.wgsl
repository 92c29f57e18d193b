// The accumulators of a tile where each invocation owns 8 x 8 outputs, declared as function-local
// variables of main (not module-scope private ones; see ops/matmul/wgsl/kernel.wgsl): sixteen named
// vec4s, acc0-3 the invocation's top four rows (4ty..4ty+3 of the tile), acc4-7 the four rows half a
// tile lower; _left holds columns 4tx..4tx+3, _right the four columns half a tile to the right.
// Included where main declares them by matmul's 128 x 128 tiles (tile128_kn_loop.wgsl,
// tile128_nk_loop.wgsl, q4g128, q8row and their fused kernels),
// conv's and conv_transpose's GEMMs and flash_attention's output role; gemm_fma8x8.wgsl adds into
// them.
  var acc0_left = vec4f(0.0);
  var acc0_right = vec4f(0.0);
  var acc1_left = vec4f(0.0);
  var acc1_right = vec4f(0.0);
  var acc2_left = vec4f(0.0);
  var acc2_right = vec4f(0.0);
  var acc3_left = vec4f(0.0);
  var acc3_right = vec4f(0.0);
  var acc4_left = vec4f(0.0);
  var acc4_right = vec4f(0.0);
  var acc5_left = vec4f(0.0);
  var acc5_right = vec4f(0.0);
  var acc6_left = vec4f(0.0);
  var acc6_right = vec4f(0.0);
  var acc7_left = vec4f(0.0);
  var acc7_right = vec4f(0.0);
