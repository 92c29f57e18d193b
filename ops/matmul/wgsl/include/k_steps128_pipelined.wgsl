// The 8 k-steps of a block of matmul's pipelined 128 x 128 tiles (kernel_pipelined,
// linear_pipelined; tile128_pipelined_decls.wgsl), written out where they run, neither looped over
// nor called: k_steps128.wgsl's k-steps with the block read from the stage that main's a_base and
// b_base point into (the stage's first slot plus ty, and plus tx). Per k, four vec4 reads of
// workgroup memory feed the 64 FMAs of gemm_fma8x8.wgsl into acc0_left .. acc7_right
// (gemm_acc8x8.wgsl). Needs a_t, b_s, LANES and HALF of the kernel and a_base, b_base of main.
    {
      let top = a_t[a_base + 0u * LANES];
      let bottom = a_t[a_base + 0u * LANES + HALF];
      let left = b_s[b_base + 0u * LANES];
      let right = b_s[b_base + 0u * LANES + HALF];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[a_base + 1u * LANES];
      let bottom = a_t[a_base + 1u * LANES + HALF];
      let left = b_s[b_base + 1u * LANES];
      let right = b_s[b_base + 1u * LANES + HALF];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[a_base + 2u * LANES];
      let bottom = a_t[a_base + 2u * LANES + HALF];
      let left = b_s[b_base + 2u * LANES];
      let right = b_s[b_base + 2u * LANES + HALF];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[a_base + 3u * LANES];
      let bottom = a_t[a_base + 3u * LANES + HALF];
      let left = b_s[b_base + 3u * LANES];
      let right = b_s[b_base + 3u * LANES + HALF];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[a_base + 4u * LANES];
      let bottom = a_t[a_base + 4u * LANES + HALF];
      let left = b_s[b_base + 4u * LANES];
      let right = b_s[b_base + 4u * LANES + HALF];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[a_base + 5u * LANES];
      let bottom = a_t[a_base + 5u * LANES + HALF];
      let left = b_s[b_base + 5u * LANES];
      let right = b_s[b_base + 5u * LANES + HALF];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[a_base + 6u * LANES];
      let bottom = a_t[a_base + 6u * LANES + HALF];
      let left = b_s[b_base + 6u * LANES];
      let right = b_s[b_base + 6u * LANES + HALF];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[a_base + 7u * LANES];
      let bottom = a_t[a_base + 7u * LANES + HALF];
      let left = b_s[b_base + 7u * LANES];
      let right = b_s[b_base + 7u * LANES + HALF];
// #include "gemm_fma8x8.wgsl"
    }
