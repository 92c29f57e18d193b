// The start of the output phase of a block in flash_attention's kernels: this invocation's
// accumulators (gemm_acc8x8.wgsl; rows 4ty.. and 64+4ty..) times the rescale factors that the
// statistics phase left in slot KEYS of `pt`, and in_block, the keys of this block (the last may be
// short). Needs key0, keys, tx and ty of main.
    let f_top = pt[KEYS * QUADS + ty];
    let f_bottom = pt[KEYS * QUADS + 16u + ty];
    acc0_left *= f_top.x;
    acc0_right *= f_top.x;
    acc1_left *= f_top.y;
    acc1_right *= f_top.y;
    acc2_left *= f_top.z;
    acc2_right *= f_top.z;
    acc3_left *= f_top.w;
    acc3_right *= f_top.w;
    acc4_left *= f_bottom.x;
    acc4_right *= f_bottom.x;
    acc5_left *= f_bottom.y;
    acc5_right *= f_bottom.y;
    acc6_left *= f_bottom.z;
    acc6_right *= f_bottom.z;
    acc7_left *= f_bottom.w;
    acc7_right *= f_bottom.w;
    let in_block = min(KEYS, u32(keys) - key0);
