// One step of the 128 x 128 dp4a tiles, after the kernel has staged a's block (a_t) and the
// weight's (w_t): a barrier, the step's 16 words (64 codes) multiplied into the i32 sums left0-7 and
// right0-7 (left0-3 rows 4ty..4ty+3, left4-7 rows 64+4ty..64+4ty+3, each columns 4tx..4tx+3; right0-7
// the same rows, columns 64+4tx..64+4tx+3): per word, four vec4u reads of workgroup memory feed 64
// dot4I8Packed. A barrier before the next step overwrites the stage. Integer sums are exact: the
// order is free. Needs dp4a_tile128.wgsl, dp4a_ops.wgsl and the kernel's left0-7 and right0-7.
    workgroupBarrier();
    for (var w = 0u; w < STEP; w++) {
      let top = a_t[w * LANES + ty];
      let bottom = a_t[w * LANES + HALF + ty];
      let left = w_t[w * LANES + tx];
      let right = w_t[w * LANES + HALF + tx];
      left0 += dot_row(top.x, left);
      right0 += dot_row(top.x, right);
      left1 += dot_row(top.y, left);
      right1 += dot_row(top.y, right);
      left2 += dot_row(top.z, left);
      right2 += dot_row(top.z, right);
      left3 += dot_row(top.w, left);
      right3 += dot_row(top.w, right);
      left4 += dot_row(bottom.x, left);
      right4 += dot_row(bottom.x, right);
      left5 += dot_row(bottom.y, left);
      right5 += dot_row(bottom.y, right);
      left6 += dot_row(bottom.z, left);
      right6 += dot_row(bottom.z, right);
      left7 += dot_row(bottom.w, left);
      right7 += dot_row(bottom.w, right);
    }
    workgroupBarrier();
