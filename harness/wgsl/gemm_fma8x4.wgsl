// One k-step's 32 FMAs (see gemm64_k_steps.wgsl): rows top and bottom times columns cols of this k,
// into acc0-7 (gemm64_main_body.wgsl). Needs top, bottom and cols.
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
