// One step of the 64 x 64 quantized tiles (q4g128_tile64, q8row_tile64 and their fused kernels), after the kernel has
// staged a's block (a_t) and the decoded weight's (w_t): a barrier, the step's 16 k multiplied into
// the 4 x 4 block of acc0-3 (rows 4ty..4ty+3, columns 4tx..4tx+3; tile64_q_setup.wgsl), a barrier
// before the next step overwrites the stage. Needs the kernels' STEP and LANES.
    workgroupBarrier();
    for (var k = 0u; k < STEP; k++) {
      let av = a_t[k][ty];
      let wv = w_t[k][tx];
      acc0 += av.x * wv;
      acc1 += av.y * wv;
      acc2 += av.z * wv;
      acc3 += av.w * wv;
    }
    workgroupBarrier();
