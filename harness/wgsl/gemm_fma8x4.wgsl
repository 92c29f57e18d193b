// One k-step's 32 FMAs in the 64 x 64 tile where each invocation owns 8 x 4 outputs (matmul/tile64
// and gemm64_gathered.wgsl, through gemm64_k_steps.wgsl): this k's rows (top: 4ty..4ty+3, bottom:
// 32+4ty..32+4ty+3) times its columns (cols: 4tx..4tx+3) added into acc0-7, one vec4 per row.
// Written out, neither looped over nor called: it stands inside each k-step's block, which declares
// the vec4s top, bottom and cols read from workgroup memory; acc0 .. acc7 are variables of the
// including main (gemm64_main_body.wgsl).
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
