// The accumulators of an output invocation in flash_attention's kernels (gemm_acc8x8.wgsl; rows
// 4ty.. and half a tile lower) times their rows' rescale factors exp(old max - new max): f_top for the
// top four rows, f_bottom for the bottom four. Needs f_top and f_bottom of the block.
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
