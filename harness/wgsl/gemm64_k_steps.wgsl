// The 16 k-steps of a block of the 64 x 64 tile (matmul/tile64, and stft's and mel's GEMM through
// gemm64_gathered.wgsl, through gemm64_loop.wgsl; matmul's linear_tile64 through its own loop),
// written out where they run
// (inside main's loop over blocks), neither looped over nor called: per k, three vec4 reads of
// workgroup memory (rows 4ty..4ty+3 and 32+4ty..32+4ty+3 of a's block, columns 4tx..4tx+3 of b's)
// feed the 32 FMAs of gemm_fma8x4.wgsl into acc0-7. No guard, no mask: the staging has already put
// zeros wherever an operand ends. The including kernel declares a_t and b_s (STEP * LANES vec4s
// each), LANES (16) and HALF (8); tx and ty are main's.
    {
      let top = a_t[0u * LANES + ty];
      let bottom = a_t[0u * LANES + HALF + ty];
      let cols = b_s[0u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[1u * LANES + ty];
      let bottom = a_t[1u * LANES + HALF + ty];
      let cols = b_s[1u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[2u * LANES + ty];
      let bottom = a_t[2u * LANES + HALF + ty];
      let cols = b_s[2u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[3u * LANES + ty];
      let bottom = a_t[3u * LANES + HALF + ty];
      let cols = b_s[3u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[4u * LANES + ty];
      let bottom = a_t[4u * LANES + HALF + ty];
      let cols = b_s[4u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[5u * LANES + ty];
      let bottom = a_t[5u * LANES + HALF + ty];
      let cols = b_s[5u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[6u * LANES + ty];
      let bottom = a_t[6u * LANES + HALF + ty];
      let cols = b_s[6u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[7u * LANES + ty];
      let bottom = a_t[7u * LANES + HALF + ty];
      let cols = b_s[7u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[8u * LANES + ty];
      let bottom = a_t[8u * LANES + HALF + ty];
      let cols = b_s[8u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[9u * LANES + ty];
      let bottom = a_t[9u * LANES + HALF + ty];
      let cols = b_s[9u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[10u * LANES + ty];
      let bottom = a_t[10u * LANES + HALF + ty];
      let cols = b_s[10u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[11u * LANES + ty];
      let bottom = a_t[11u * LANES + HALF + ty];
      let cols = b_s[11u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[12u * LANES + ty];
      let bottom = a_t[12u * LANES + HALF + ty];
      let cols = b_s[12u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[13u * LANES + ty];
      let bottom = a_t[13u * LANES + HALF + ty];
      let cols = b_s[13u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[14u * LANES + ty];
      let bottom = a_t[14u * LANES + HALF + ty];
      let cols = b_s[14u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[15u * LANES + ty];
      let bottom = a_t[15u * LANES + HALF + ty];
      let cols = b_s[15u * LANES + tx];
// #include "gemm_fma8x4.wgsl"
    }
