// The 16 k-steps of a block of the 128 x 128 tile (through tile128_kn_loop.wgsl for kernel,
// f16storage and kernel_fused, tile128_nk_loop.wgsl for linear and linear_fused, and the q8row and
// q4g128 loops), written out where they run (inside main's loop), neither looped over nor called:
// per k, four vec4 reads of workgroup memory (rows 4ty..4ty+3 and 64+4ty..64+4ty+3 of a's block,
// columns 4tx..4tx+3 and 64+4tx..64+4tx+3 of b's or the staged weight's) feed the 64 FMAs of
// gemm_fma8x8.wgsl (harness/wgsl, shared with conv's k-steps) into the accumulators acc0_left ..
// acc7_right that main declares (gemm_acc8x8.wgsl). The indices are constants plus tx or ty; no
// guard, no mask: the staging has already put zeros wherever an operand ends. Needs a_t, b_s, LANES
// and HALF of the kernel.
    {
      let top = a_t[0u][ty];
      let bottom = a_t[0u][HALF + ty];
      let left = b_s[0u][tx];
      let right = b_s[0u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[1u][ty];
      let bottom = a_t[1u][HALF + ty];
      let left = b_s[1u][tx];
      let right = b_s[1u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[2u][ty];
      let bottom = a_t[2u][HALF + ty];
      let left = b_s[2u][tx];
      let right = b_s[2u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[3u][ty];
      let bottom = a_t[3u][HALF + ty];
      let left = b_s[3u][tx];
      let right = b_s[3u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[4u][ty];
      let bottom = a_t[4u][HALF + ty];
      let left = b_s[4u][tx];
      let right = b_s[4u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[5u][ty];
      let bottom = a_t[5u][HALF + ty];
      let left = b_s[5u][tx];
      let right = b_s[5u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[6u][ty];
      let bottom = a_t[6u][HALF + ty];
      let left = b_s[6u][tx];
      let right = b_s[6u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[7u][ty];
      let bottom = a_t[7u][HALF + ty];
      let left = b_s[7u][tx];
      let right = b_s[7u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[8u][ty];
      let bottom = a_t[8u][HALF + ty];
      let left = b_s[8u][tx];
      let right = b_s[8u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[9u][ty];
      let bottom = a_t[9u][HALF + ty];
      let left = b_s[9u][tx];
      let right = b_s[9u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[10u][ty];
      let bottom = a_t[10u][HALF + ty];
      let left = b_s[10u][tx];
      let right = b_s[10u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[11u][ty];
      let bottom = a_t[11u][HALF + ty];
      let left = b_s[11u][tx];
      let right = b_s[11u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[12u][ty];
      let bottom = a_t[12u][HALF + ty];
      let left = b_s[12u][tx];
      let right = b_s[12u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[13u][ty];
      let bottom = a_t[13u][HALF + ty];
      let left = b_s[13u][tx];
      let right = b_s[13u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[14u][ty];
      let bottom = a_t[14u][HALF + ty];
      let left = b_s[14u][tx];
      let right = b_s[14u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[15u][ty];
      let bottom = a_t[15u][HALF + ty];
      let left = b_s[15u][tx];
      let right = b_s[15u][HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
