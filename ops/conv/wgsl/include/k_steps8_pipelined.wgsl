// The STEP = 8 k-steps of a block of conv's pipelined tile (conv_gemm_pipelined.wgsl), written out
// where they run, neither looped over nor called: gemm8_k_steps.wgsl's k-steps reading stage `st` of
// main (the outer index uniform, the k-step's offset a constant, the inner tx or ty). Per k, four vec4
// reads of workgroup memory feed the 64 FMAs of gemm_fma8x8.wgsl into the accumulators of
// gemm_acc8x8.wgsl, in the same order as gemm8_k_steps.wgsl's. Needs a_t, b_s, LANES_M, LANES_N,
// HALF_M and HALF_N of the kernel and st, tx and ty of main.
    {
      let top = a_t[st][0u * LANES_M + ty];
      let bottom = a_t[st][0u * LANES_M + HALF_M + ty];
      let left = b_s[st][0u * LANES_N + tx];
      let right = b_s[st][0u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][1u * LANES_M + ty];
      let bottom = a_t[st][1u * LANES_M + HALF_M + ty];
      let left = b_s[st][1u * LANES_N + tx];
      let right = b_s[st][1u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][2u * LANES_M + ty];
      let bottom = a_t[st][2u * LANES_M + HALF_M + ty];
      let left = b_s[st][2u * LANES_N + tx];
      let right = b_s[st][2u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][3u * LANES_M + ty];
      let bottom = a_t[st][3u * LANES_M + HALF_M + ty];
      let left = b_s[st][3u * LANES_N + tx];
      let right = b_s[st][3u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][4u * LANES_M + ty];
      let bottom = a_t[st][4u * LANES_M + HALF_M + ty];
      let left = b_s[st][4u * LANES_N + tx];
      let right = b_s[st][4u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][5u * LANES_M + ty];
      let bottom = a_t[st][5u * LANES_M + HALF_M + ty];
      let left = b_s[st][5u * LANES_N + tx];
      let right = b_s[st][5u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][6u * LANES_M + ty];
      let bottom = a_t[st][6u * LANES_M + HALF_M + ty];
      let left = b_s[st][6u * LANES_N + tx];
      let right = b_s[st][6u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[st][7u * LANES_M + ty];
      let bottom = a_t[st][7u * LANES_M + HALF_M + ty];
      let left = b_s[st][7u * LANES_N + tx];
      let right = b_s[st][7u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
