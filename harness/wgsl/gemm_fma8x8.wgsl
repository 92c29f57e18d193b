// One k-step's 64 FMAs (see k_steps128.wgsl, gemm8_k_steps.wgsl): rows top and bottom times columns
// left and right of this k, into the accumulators of gemm_acc8x8.wgsl. Needs top, bottom, left, right.
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
