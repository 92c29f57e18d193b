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
      let top = a_t[0u * LANES + ty];
      let bottom = a_t[0u * LANES + HALF + ty];
      let left = b_s[0u * LANES + tx];
      let right = b_s[0u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[1u * LANES + ty];
      let bottom = a_t[1u * LANES + HALF + ty];
      let left = b_s[1u * LANES + tx];
      let right = b_s[1u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[2u * LANES + ty];
      let bottom = a_t[2u * LANES + HALF + ty];
      let left = b_s[2u * LANES + tx];
      let right = b_s[2u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[3u * LANES + ty];
      let bottom = a_t[3u * LANES + HALF + ty];
      let left = b_s[3u * LANES + tx];
      let right = b_s[3u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[4u * LANES + ty];
      let bottom = a_t[4u * LANES + HALF + ty];
      let left = b_s[4u * LANES + tx];
      let right = b_s[4u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[5u * LANES + ty];
      let bottom = a_t[5u * LANES + HALF + ty];
      let left = b_s[5u * LANES + tx];
      let right = b_s[5u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[6u * LANES + ty];
      let bottom = a_t[6u * LANES + HALF + ty];
      let left = b_s[6u * LANES + tx];
      let right = b_s[6u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[7u * LANES + ty];
      let bottom = a_t[7u * LANES + HALF + ty];
      let left = b_s[7u * LANES + tx];
      let right = b_s[7u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[8u * LANES + ty];
      let bottom = a_t[8u * LANES + HALF + ty];
      let left = b_s[8u * LANES + tx];
      let right = b_s[8u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[9u * LANES + ty];
      let bottom = a_t[9u * LANES + HALF + ty];
      let left = b_s[9u * LANES + tx];
      let right = b_s[9u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[10u * LANES + ty];
      let bottom = a_t[10u * LANES + HALF + ty];
      let left = b_s[10u * LANES + tx];
      let right = b_s[10u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[11u * LANES + ty];
      let bottom = a_t[11u * LANES + HALF + ty];
      let left = b_s[11u * LANES + tx];
      let right = b_s[11u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[12u * LANES + ty];
      let bottom = a_t[12u * LANES + HALF + ty];
      let left = b_s[12u * LANES + tx];
      let right = b_s[12u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[13u * LANES + ty];
      let bottom = a_t[13u * LANES + HALF + ty];
      let left = b_s[13u * LANES + tx];
      let right = b_s[13u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[14u * LANES + ty];
      let bottom = a_t[14u * LANES + HALF + ty];
      let left = b_s[14u * LANES + tx];
      let right = b_s[14u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
    {
      let top = a_t[15u * LANES + ty];
      let bottom = a_t[15u * LANES + HALF + ty];
      let left = b_s[15u * LANES + tx];
      let right = b_s[15u * LANES + HALF + tx];
// #include "gemm_fma8x8.wgsl"
    }
