// The start of the output phase of a block in flash_attention's kernels: this invocation's
// accumulators (gemm_acc8x8.wgsl; rows 4ty.. and 64+4ty..) times the rescale factors that the
// statistics phase left in slot KEYS of `pt`, and in_block, the keys of this block (the last may be
// short). Needs key0, keys, tx and ty of main.
    let f_top = pt[KEYS * QUADS + ty];
    let f_bottom = pt[KEYS * QUADS + 16u + ty];
// #include "flash_rescale_acc.wgsl"
    let in_block = min(KEYS, u32(keys) - key0);
