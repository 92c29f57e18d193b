// The STEP = 8 k-steps of a register-blocked GEMM block (conv and conv_transpose), written out where
// they run (inside the kernel's loop over blocks), neither looped over nor called: per k, four vec4
// reads of workgroup memory (rows 4ty..4ty+3 and 4 HALF_M + 4ty.. of a_t, the transposed weight
// block; columns 4tx..4tx+3 and 4 HALF_N + 4tx.. of b_s, the gathered input block) feed the 64 FMAs
// of gemm_fma8x8.wgsl into the accumulators of gemm_acc8x8.wgsl: matmul's 128 x 128 k-steps
// (ops/matmul/wgsl/include/k_steps128.wgsl) at half the depth, with a tile's rows and columns
// counted apart. No guard: the staging put zeros wherever an operand ends. The including kernel
// declares a_t, b_s, LANES_M, LANES_N, HALF_M and HALF_N; tx and ty are main's.
    {
      let top = a_t[0u * LANES_M + ty];
      let bottom = a_t[0u * LANES_M + HALF_M + ty];
      let left = b_s[0u * LANES_N + tx];
      let right = b_s[0u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[1u * LANES_M + ty];
      let bottom = a_t[1u * LANES_M + HALF_M + ty];
      let left = b_s[1u * LANES_N + tx];
      let right = b_s[1u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[2u * LANES_M + ty];
      let bottom = a_t[2u * LANES_M + HALF_M + ty];
      let left = b_s[2u * LANES_N + tx];
      let right = b_s[2u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[3u * LANES_M + ty];
      let bottom = a_t[3u * LANES_M + HALF_M + ty];
      let left = b_s[3u * LANES_N + tx];
      let right = b_s[3u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[4u * LANES_M + ty];
      let bottom = a_t[4u * LANES_M + HALF_M + ty];
      let left = b_s[4u * LANES_N + tx];
      let right = b_s[4u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[5u * LANES_M + ty];
      let bottom = a_t[5u * LANES_M + HALF_M + ty];
      let left = b_s[5u * LANES_N + tx];
      let right = b_s[5u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[6u * LANES_M + ty];
      let bottom = a_t[6u * LANES_M + HALF_M + ty];
      let left = b_s[6u * LANES_N + tx];
      let right = b_s[6u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[7u * LANES_M + ty];
      let bottom = a_t[7u * LANES_M + HALF_M + ty];
      let left = b_s[7u * LANES_N + tx];
      let right = b_s[7u * LANES_N + HALF_N + tx];
// #include "gemm_fma8x8.wgsl"
    }
