// The 16 k-steps of a block of the 64 x 64 tile (matmul/tile64, and stft's and mel's GEMM through
// gemm64_gathered.wgsl, through gemm64_loop.wgsl; matmul's linear_tile64 through its own loop),
// written out where they run
// (inside main's loop over blocks), neither looped over nor called: per k, three vec4 reads of
// workgroup memory (rows 4ty..4ty+3 and 32+4ty..32+4ty+3 of a's block, columns 4tx..4tx+3 of b's)
// feed the 32 FMAs of gemm_fma8x4.wgsl into acc0-7. No guard, no mask: the staging has already put
// zeros wherever an operand ends. The including kernel declares a_t and b_s (each
// `array<array<vec4f, LANES>, STEP>`, indexed [k][lane]), LANES (16) and HALF (8); tx and ty are main's.
    {
      let top = a_t[0u][ty];
      let bottom = a_t[0u][HALF + ty];
      let cols = b_s[0u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[1u][ty];
      let bottom = a_t[1u][HALF + ty];
      let cols = b_s[1u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[2u][ty];
      let bottom = a_t[2u][HALF + ty];
      let cols = b_s[2u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[3u][ty];
      let bottom = a_t[3u][HALF + ty];
      let cols = b_s[3u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[4u][ty];
      let bottom = a_t[4u][HALF + ty];
      let cols = b_s[4u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[5u][ty];
      let bottom = a_t[5u][HALF + ty];
      let cols = b_s[5u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[6u][ty];
      let bottom = a_t[6u][HALF + ty];
      let cols = b_s[6u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[7u][ty];
      let bottom = a_t[7u][HALF + ty];
      let cols = b_s[7u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[8u][ty];
      let bottom = a_t[8u][HALF + ty];
      let cols = b_s[8u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[9u][ty];
      let bottom = a_t[9u][HALF + ty];
      let cols = b_s[9u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[10u][ty];
      let bottom = a_t[10u][HALF + ty];
      let cols = b_s[10u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[11u][ty];
      let bottom = a_t[11u][HALF + ty];
      let cols = b_s[11u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[12u][ty];
      let bottom = a_t[12u][HALF + ty];
      let cols = b_s[12u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[13u][ty];
      let bottom = a_t[13u][HALF + ty];
      let cols = b_s[13u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[14u][ty];
      let bottom = a_t[14u][HALF + ty];
      let cols = b_s[14u][tx];
// #include "gemm_fma8x4.wgsl"
    }
    {
      let top = a_t[15u][ty];
      let bottom = a_t[15u][HALF + ty];
      let cols = b_s[15u][tx];
// #include "gemm_fma8x4.wgsl"
    }
