// One step of the 128 x 128 dp4a tiles, after the kernel has staged a's block (a_t) and the
// weight's (w_t): a barrier, the step's 16 words (64 codes) multiplied into the i32 sums left0-7 and
// right0-7 (dp4a_sums128.wgsl: left0-3 rows 4ty..4ty+3, left4-7 rows 64+4ty..64+4ty+3, each columns
// 4tx..4tx+3; right0-7 the same rows, columns 64+4tx..64+4tx+3): per word, four vec4u reads of
// workgroup memory feed 64 dot4I8Packed (dp4a_dot8x8.wgsl). A barrier before the next step
// overwrites the stage. Integer sums are exact: the order is free. Needs dp4a_tile128.wgsl,
// dp4a_ops.wgsl and the kernel's left0-7 and right0-7.
    workgroupBarrier();
    for (var w = 0u; w < STEP; w++) {
      let top = a_t[w * LANES + ty];
      let bottom = a_t[w * LANES + HALF + ty];
      let left = w_t[w * LANES + tx];
      let right = w_t[w * LANES + HALF + tx];
// #include "dp4a_dot8x8.wgsl"
    }
    workgroupBarrier();
