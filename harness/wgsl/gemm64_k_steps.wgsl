// The 16 k-steps of a block of the 64 x 64 tile, written out where they run (inside main's loop),
// neither looped over nor called: per k, three vec4 reads of workgroup memory (rows 4ty..4ty+3 and
// 32+4ty..32+4ty+3 of a's block, columns 4tx..4tx+3 of b's) feed 32 FMAs into acc0-7. No guard, no
// mask: the staging has already put zeros wherever an operand ends.
// (The same text as ops/matmul/wgsl/include/k_steps64.wgsl, which matmul still includes from there.)
    {
      let top = a_t[0u * LANES + ty];
      let bottom = a_t[0u * LANES + HALF + ty];
      let cols = b_s[0u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[1u * LANES + ty];
      let bottom = a_t[1u * LANES + HALF + ty];
      let cols = b_s[1u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[2u * LANES + ty];
      let bottom = a_t[2u * LANES + HALF + ty];
      let cols = b_s[2u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[3u * LANES + ty];
      let bottom = a_t[3u * LANES + HALF + ty];
      let cols = b_s[3u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[4u * LANES + ty];
      let bottom = a_t[4u * LANES + HALF + ty];
      let cols = b_s[4u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[5u * LANES + ty];
      let bottom = a_t[5u * LANES + HALF + ty];
      let cols = b_s[5u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[6u * LANES + ty];
      let bottom = a_t[6u * LANES + HALF + ty];
      let cols = b_s[6u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[7u * LANES + ty];
      let bottom = a_t[7u * LANES + HALF + ty];
      let cols = b_s[7u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[8u * LANES + ty];
      let bottom = a_t[8u * LANES + HALF + ty];
      let cols = b_s[8u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[9u * LANES + ty];
      let bottom = a_t[9u * LANES + HALF + ty];
      let cols = b_s[9u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[10u * LANES + ty];
      let bottom = a_t[10u * LANES + HALF + ty];
      let cols = b_s[10u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[11u * LANES + ty];
      let bottom = a_t[11u * LANES + HALF + ty];
      let cols = b_s[11u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[12u * LANES + ty];
      let bottom = a_t[12u * LANES + HALF + ty];
      let cols = b_s[12u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[13u * LANES + ty];
      let bottom = a_t[13u * LANES + HALF + ty];
      let cols = b_s[13u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[14u * LANES + ty];
      let bottom = a_t[14u * LANES + HALF + ty];
      let cols = b_s[14u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
    {
      let top = a_t[15u * LANES + ty];
      let bottom = a_t[15u * LANES + HALF + ty];
      let cols = b_s[15u * LANES + tx];
      acc0 = fma(vec4f(top.x), cols, acc0);
      acc1 = fma(vec4f(top.y), cols, acc1);
      acc2 = fma(vec4f(top.z), cols, acc2);
      acc3 = fma(vec4f(top.w), cols, acc3);
      acc4 = fma(vec4f(bottom.x), cols, acc4);
      acc5 = fma(vec4f(bottom.y), cols, acc5);
      acc6 = fma(vec4f(bottom.z), cols, acc6);
      acc7 = fma(vec4f(bottom.w), cols, acc7);
    }
