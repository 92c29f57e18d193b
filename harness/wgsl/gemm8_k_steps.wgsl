// The STEP = 8 k-steps of a register-blocked GEMM block (conv and conv_transpose), written out where
// they run (inside the kernel's loop over blocks), neither looped over nor called: per k, four vec4
// reads of workgroup memory (rows 4ty..4ty+3 and 4 HALF_M + 4ty.. of a_t, the transposed weight
// block; columns 4tx..4tx+3 and 4 HALF_N + 4tx.. of b_s, the gathered input block) feed 64 FMAs into
// the accumulators of gemm8_acc.wgsl. No guard: the staging put zeros wherever an operand ends. The
// including kernel declares a_t, b_s, LANES_M, LANES_N, HALF_M and HALF_N.
    {
      let top = a_t[0u * LANES_M + ty];
      let bottom = a_t[0u * LANES_M + HALF_M + ty];
      let left = b_s[0u * LANES_N + tx];
      let right = b_s[0u * LANES_N + HALF_N + tx];
      acc0_left = fma(vec4f(top.x), left, acc0_left);
      acc0_right = fma(vec4f(top.x), right, acc0_right);
      acc1_left = fma(vec4f(top.y), left, acc1_left);
      acc1_right = fma(vec4f(top.y), right, acc1_right);
      acc2_left = fma(vec4f(top.z), left, acc2_left);
      acc2_right = fma(vec4f(top.z), right, acc2_right);
      acc3_left = fma(vec4f(top.w), left, acc3_left);
      acc3_right = fma(vec4f(top.w), right, acc3_right);
      acc4_left = fma(vec4f(bottom.x), left, acc4_left);
      acc4_right = fma(vec4f(bottom.x), right, acc4_right);
      acc5_left = fma(vec4f(bottom.y), left, acc5_left);
      acc5_right = fma(vec4f(bottom.y), right, acc5_right);
      acc6_left = fma(vec4f(bottom.z), left, acc6_left);
      acc6_right = fma(vec4f(bottom.z), right, acc6_right);
      acc7_left = fma(vec4f(bottom.w), left, acc7_left);
      acc7_right = fma(vec4f(bottom.w), right, acc7_right);
    }
    {
      let top = a_t[1u * LANES_M + ty];
      let bottom = a_t[1u * LANES_M + HALF_M + ty];
      let left = b_s[1u * LANES_N + tx];
      let right = b_s[1u * LANES_N + HALF_N + tx];
      acc0_left = fma(vec4f(top.x), left, acc0_left);
      acc0_right = fma(vec4f(top.x), right, acc0_right);
      acc1_left = fma(vec4f(top.y), left, acc1_left);
      acc1_right = fma(vec4f(top.y), right, acc1_right);
      acc2_left = fma(vec4f(top.z), left, acc2_left);
      acc2_right = fma(vec4f(top.z), right, acc2_right);
      acc3_left = fma(vec4f(top.w), left, acc3_left);
      acc3_right = fma(vec4f(top.w), right, acc3_right);
      acc4_left = fma(vec4f(bottom.x), left, acc4_left);
      acc4_right = fma(vec4f(bottom.x), right, acc4_right);
      acc5_left = fma(vec4f(bottom.y), left, acc5_left);
      acc5_right = fma(vec4f(bottom.y), right, acc5_right);
      acc6_left = fma(vec4f(bottom.z), left, acc6_left);
      acc6_right = fma(vec4f(bottom.z), right, acc6_right);
      acc7_left = fma(vec4f(bottom.w), left, acc7_left);
      acc7_right = fma(vec4f(bottom.w), right, acc7_right);
    }
    {
      let top = a_t[2u * LANES_M + ty];
      let bottom = a_t[2u * LANES_M + HALF_M + ty];
      let left = b_s[2u * LANES_N + tx];
      let right = b_s[2u * LANES_N + HALF_N + tx];
      acc0_left = fma(vec4f(top.x), left, acc0_left);
      acc0_right = fma(vec4f(top.x), right, acc0_right);
      acc1_left = fma(vec4f(top.y), left, acc1_left);
      acc1_right = fma(vec4f(top.y), right, acc1_right);
      acc2_left = fma(vec4f(top.z), left, acc2_left);
      acc2_right = fma(vec4f(top.z), right, acc2_right);
      acc3_left = fma(vec4f(top.w), left, acc3_left);
      acc3_right = fma(vec4f(top.w), right, acc3_right);
      acc4_left = fma(vec4f(bottom.x), left, acc4_left);
      acc4_right = fma(vec4f(bottom.x), right, acc4_right);
      acc5_left = fma(vec4f(bottom.y), left, acc5_left);
      acc5_right = fma(vec4f(bottom.y), right, acc5_right);
      acc6_left = fma(vec4f(bottom.z), left, acc6_left);
      acc6_right = fma(vec4f(bottom.z), right, acc6_right);
      acc7_left = fma(vec4f(bottom.w), left, acc7_left);
      acc7_right = fma(vec4f(bottom.w), right, acc7_right);
    }
    {
      let top = a_t[3u * LANES_M + ty];
      let bottom = a_t[3u * LANES_M + HALF_M + ty];
      let left = b_s[3u * LANES_N + tx];
      let right = b_s[3u * LANES_N + HALF_N + tx];
      acc0_left = fma(vec4f(top.x), left, acc0_left);
      acc0_right = fma(vec4f(top.x), right, acc0_right);
      acc1_left = fma(vec4f(top.y), left, acc1_left);
      acc1_right = fma(vec4f(top.y), right, acc1_right);
      acc2_left = fma(vec4f(top.z), left, acc2_left);
      acc2_right = fma(vec4f(top.z), right, acc2_right);
      acc3_left = fma(vec4f(top.w), left, acc3_left);
      acc3_right = fma(vec4f(top.w), right, acc3_right);
      acc4_left = fma(vec4f(bottom.x), left, acc4_left);
      acc4_right = fma(vec4f(bottom.x), right, acc4_right);
      acc5_left = fma(vec4f(bottom.y), left, acc5_left);
      acc5_right = fma(vec4f(bottom.y), right, acc5_right);
      acc6_left = fma(vec4f(bottom.z), left, acc6_left);
      acc6_right = fma(vec4f(bottom.z), right, acc6_right);
      acc7_left = fma(vec4f(bottom.w), left, acc7_left);
      acc7_right = fma(vec4f(bottom.w), right, acc7_right);
    }
    {
      let top = a_t[4u * LANES_M + ty];
      let bottom = a_t[4u * LANES_M + HALF_M + ty];
      let left = b_s[4u * LANES_N + tx];
      let right = b_s[4u * LANES_N + HALF_N + tx];
      acc0_left = fma(vec4f(top.x), left, acc0_left);
      acc0_right = fma(vec4f(top.x), right, acc0_right);
      acc1_left = fma(vec4f(top.y), left, acc1_left);
      acc1_right = fma(vec4f(top.y), right, acc1_right);
      acc2_left = fma(vec4f(top.z), left, acc2_left);
      acc2_right = fma(vec4f(top.z), right, acc2_right);
      acc3_left = fma(vec4f(top.w), left, acc3_left);
      acc3_right = fma(vec4f(top.w), right, acc3_right);
      acc4_left = fma(vec4f(bottom.x), left, acc4_left);
      acc4_right = fma(vec4f(bottom.x), right, acc4_right);
      acc5_left = fma(vec4f(bottom.y), left, acc5_left);
      acc5_right = fma(vec4f(bottom.y), right, acc5_right);
      acc6_left = fma(vec4f(bottom.z), left, acc6_left);
      acc6_right = fma(vec4f(bottom.z), right, acc6_right);
      acc7_left = fma(vec4f(bottom.w), left, acc7_left);
      acc7_right = fma(vec4f(bottom.w), right, acc7_right);
    }
    {
      let top = a_t[5u * LANES_M + ty];
      let bottom = a_t[5u * LANES_M + HALF_M + ty];
      let left = b_s[5u * LANES_N + tx];
      let right = b_s[5u * LANES_N + HALF_N + tx];
      acc0_left = fma(vec4f(top.x), left, acc0_left);
      acc0_right = fma(vec4f(top.x), right, acc0_right);
      acc1_left = fma(vec4f(top.y), left, acc1_left);
      acc1_right = fma(vec4f(top.y), right, acc1_right);
      acc2_left = fma(vec4f(top.z), left, acc2_left);
      acc2_right = fma(vec4f(top.z), right, acc2_right);
      acc3_left = fma(vec4f(top.w), left, acc3_left);
      acc3_right = fma(vec4f(top.w), right, acc3_right);
      acc4_left = fma(vec4f(bottom.x), left, acc4_left);
      acc4_right = fma(vec4f(bottom.x), right, acc4_right);
      acc5_left = fma(vec4f(bottom.y), left, acc5_left);
      acc5_right = fma(vec4f(bottom.y), right, acc5_right);
      acc6_left = fma(vec4f(bottom.z), left, acc6_left);
      acc6_right = fma(vec4f(bottom.z), right, acc6_right);
      acc7_left = fma(vec4f(bottom.w), left, acc7_left);
      acc7_right = fma(vec4f(bottom.w), right, acc7_right);
    }
    {
      let top = a_t[6u * LANES_M + ty];
      let bottom = a_t[6u * LANES_M + HALF_M + ty];
      let left = b_s[6u * LANES_N + tx];
      let right = b_s[6u * LANES_N + HALF_N + tx];
      acc0_left = fma(vec4f(top.x), left, acc0_left);
      acc0_right = fma(vec4f(top.x), right, acc0_right);
      acc1_left = fma(vec4f(top.y), left, acc1_left);
      acc1_right = fma(vec4f(top.y), right, acc1_right);
      acc2_left = fma(vec4f(top.z), left, acc2_left);
      acc2_right = fma(vec4f(top.z), right, acc2_right);
      acc3_left = fma(vec4f(top.w), left, acc3_left);
      acc3_right = fma(vec4f(top.w), right, acc3_right);
      acc4_left = fma(vec4f(bottom.x), left, acc4_left);
      acc4_right = fma(vec4f(bottom.x), right, acc4_right);
      acc5_left = fma(vec4f(bottom.y), left, acc5_left);
      acc5_right = fma(vec4f(bottom.y), right, acc5_right);
      acc6_left = fma(vec4f(bottom.z), left, acc6_left);
      acc6_right = fma(vec4f(bottom.z), right, acc6_right);
      acc7_left = fma(vec4f(bottom.w), left, acc7_left);
      acc7_right = fma(vec4f(bottom.w), right, acc7_right);
    }
    {
      let top = a_t[7u * LANES_M + ty];
      let bottom = a_t[7u * LANES_M + HALF_M + ty];
      let left = b_s[7u * LANES_N + tx];
      let right = b_s[7u * LANES_N + HALF_N + tx];
      acc0_left = fma(vec4f(top.x), left, acc0_left);
      acc0_right = fma(vec4f(top.x), right, acc0_right);
      acc1_left = fma(vec4f(top.y), left, acc1_left);
      acc1_right = fma(vec4f(top.y), right, acc1_right);
      acc2_left = fma(vec4f(top.z), left, acc2_left);
      acc2_right = fma(vec4f(top.z), right, acc2_right);
      acc3_left = fma(vec4f(top.w), left, acc3_left);
      acc3_right = fma(vec4f(top.w), right, acc3_right);
      acc4_left = fma(vec4f(bottom.x), left, acc4_left);
      acc4_right = fma(vec4f(bottom.x), right, acc4_right);
      acc5_left = fma(vec4f(bottom.y), left, acc5_left);
      acc5_right = fma(vec4f(bottom.y), right, acc5_right);
      acc6_left = fma(vec4f(bottom.z), left, acc6_left);
      acc6_right = fma(vec4f(bottom.z), right, acc6_right);
      acc7_left = fma(vec4f(bottom.w), left, acc7_left);
      acc7_right = fma(vec4f(bottom.w), right, acc7_right);
    }
