// One step of the 64 x 64 dp4a tiles, after the kernel has staged a's block (a_t) and the weight's (w_t): a
// barrier, the step's 32 words (128 codes) multiplied into the i32 sums isum0-7 (isum0-3 rows
// 4ty..4ty+3, isum4-7 rows 32+4ty..32+4ty+3, each columns 4tx..4tx+3): per word, three vec4u reads
// of workgroup memory feed 32 dot4I8Packed. A barrier before the next step overwrites the stage.
// Integer sums are exact: the order is free. Needs dp4a_tile64.wgsl, dp4a_ops.wgsl and the kernel's isum0-7.
    workgroupBarrier();
    for (var w = 0u; w < STEP; w++) {
      let top = a_t[w * LANES + ty];
      let bottom = a_t[w * LANES + HALF + ty];
      let wv = w_t[w * LANES + tx];
      isum0 += dot_row(top.x, wv);
      isum1 += dot_row(top.y, wv);
      isum2 += dot_row(top.z, wv);
      isum3 += dot_row(top.w, wv);
      isum4 += dot_row(bottom.x, wv);
      isum5 += dot_row(bottom.y, wv);
      isum6 += dot_row(bottom.z, wv);
      isum7 += dot_row(bottom.w, wv);
    }
    workgroupBarrier();
