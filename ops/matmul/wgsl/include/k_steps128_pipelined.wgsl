// The 16 k-steps of a block of matmul's pipelined 128 x 128 tiles (kernel_pipelined,
// linear_pipelined; tile128_pipelined_decls.wgsl), written out where they run, neither looped over
// nor called: k_steps128.wgsl's k-steps reading the stage st of main (the outer index uniform, the
// k-step's a constant, the inner tx or ty). Per k, four vec4 reads of workgroup memory feed the 64
// FMAs of gemm_fma8x8.wgsl into acc0_left .. acc7_right (gemm_acc8x8.wgsl). Needs a_t, b_s and HALF
// of the kernel and st of main.
    {
      let top = a_t[st][0u][ty];
      let bottom = a_t[st][0u][HALF + ty];
      let left = b_s[st][0u][tx];
      let right = b_s[st][0u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][1u][ty];
      let bottom = a_t[st][1u][HALF + ty];
      let left = b_s[st][1u][tx];
      let right = b_s[st][1u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][2u][ty];
      let bottom = a_t[st][2u][HALF + ty];
      let left = b_s[st][2u][tx];
      let right = b_s[st][2u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][3u][ty];
      let bottom = a_t[st][3u][HALF + ty];
      let left = b_s[st][3u][tx];
      let right = b_s[st][3u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][4u][ty];
      let bottom = a_t[st][4u][HALF + ty];
      let left = b_s[st][4u][tx];
      let right = b_s[st][4u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][5u][ty];
      let bottom = a_t[st][5u][HALF + ty];
      let left = b_s[st][5u][tx];
      let right = b_s[st][5u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][6u][ty];
      let bottom = a_t[st][6u][HALF + ty];
      let left = b_s[st][6u][tx];
      let right = b_s[st][6u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][7u][ty];
      let bottom = a_t[st][7u][HALF + ty];
      let left = b_s[st][7u][tx];
      let right = b_s[st][7u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][8u][ty];
      let bottom = a_t[st][8u][HALF + ty];
      let left = b_s[st][8u][tx];
      let right = b_s[st][8u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][9u][ty];
      let bottom = a_t[st][9u][HALF + ty];
      let left = b_s[st][9u][tx];
      let right = b_s[st][9u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][10u][ty];
      let bottom = a_t[st][10u][HALF + ty];
      let left = b_s[st][10u][tx];
      let right = b_s[st][10u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][11u][ty];
      let bottom = a_t[st][11u][HALF + ty];
      let left = b_s[st][11u][tx];
      let right = b_s[st][11u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][12u][ty];
      let bottom = a_t[st][12u][HALF + ty];
      let left = b_s[st][12u][tx];
      let right = b_s[st][12u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][13u][ty];
      let bottom = a_t[st][13u][HALF + ty];
      let left = b_s[st][13u][tx];
      let right = b_s[st][13u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][14u][ty];
      let bottom = a_t[st][14u][HALF + ty];
      let left = b_s[st][14u][tx];
      let right = b_s[st][14u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][15u][ty];
      let bottom = a_t[st][15u][HALF + ty];
      let left = b_s[st][15u][tx];
      let right = b_s[st][15u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
