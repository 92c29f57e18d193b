// One step of the dp4a tiles, after the kernel has staged a's block (a_t) and the weight's (w_t): a
// barrier, the step's 32 words (128 codes) multiplied into the i32 sums isum0-3 (rows 4ty..4ty+3,
// columns 4tx..4tx+3), a barrier before the next step overwrites the stage. Integer sums are exact:
// the order is free. Needs dp4a_decls.wgsl and the kernel's isum0-3.
    workgroupBarrier();
    for (var w = 0u; w < STEP; w++) {
      let av = a_t[w * LANES + ty];
      let wv = w_t[w * LANES + tx];
      isum0 += dot_row(av.x, wv);
      isum1 += dot_row(av.y, wv);
      isum2 += dot_row(av.z, wv);
      isum3 += dot_row(av.w, wv);
    }
    workgroupBarrier();
