// One k-step's 64 FMAs in a tile where each invocation owns 8 x 8 outputs (matmul's 128 x 128 tiles
// through k_steps128.wgsl there, conv's and conv_transpose's through gemm8_k_steps.wgsl): the outer
// product of this k's rows (top: the four rows 4ty..4ty+3, bottom: the four rows half a tile lower)
// and columns (left: 4tx..4tx+3, right: half a tile to the right) added into the sixteen
// accumulators of gemm_acc8x8.wgsl. Written out, neither looped over nor called: it stands inside
// each k-step's block, which declares the vec4s top, bottom, left and right read from workgroup
// memory; acc0_left .. acc7_right are variables of the including main.
      acc0_left = fma(vec4f(top.x), left, acc0_left);
      acc0_right = fma(vec4f(top.x), right, acc0_right);
      acc1_left = fma(vec4f(top.y), left, acc1_left);
      acc1_right = fma(vec4f(top.y), right, acc1_right);
      acc2_left = fma(vec4f(top.z), left, acc2_left);
      acc2_right = fma(vec4f(top.z), right, acc2_right);
      acc3_left = fma(vec4f(top.w), left, acc3_left);
      acc3_right = fma(vec4f(top.w), right, acc3_right);
      acc4_left = fma(vec4f(bottom.x), left, acc4_left);
      acc4_right = fma(vec4f(bottom.x), right, acc4_right);
      acc5_left = fma(vec4f(bottom.y), left, acc5_left);
      acc5_right = fma(vec4f(bottom.y), right, acc5_right);
      acc6_left = fma(vec4f(bottom.z), left, acc6_left);
      acc6_right = fma(vec4f(bottom.z), right, acc6_right);
      acc7_left = fma(vec4f(bottom.w), left, acc7_left);
      acc7_right = fma(vec4f(bottom.w), right, acc7_right);
