// The end of main in flash_attention's kernels, after the last block: each statistics invocation
// turns its row's sum into 1 / sum (0 for a row with no live key) in slot KEYS of `pt`, and after a
// barrier every output invocation writes its 8 x 8 outputs (gemm_acc8x8.wgsl) times those factors
// through store (flash_store.wgsl). Needs row0, q_base, own_quad, own_lane, run_sum, tx, ty, dv_left and
// dv_right of main.
  // The sums, through slot KEYS: 1 / sum per row, 0 for a row with no live key.
  if (lid < ROWS) {
    pt[KEYS * QUADS + own_quad][own_lane] = select(1.0 / run_sum, 0.0, run_sum == 0.0);
  }
  workgroupBarrier();
  let inv_top = pt[KEYS * QUADS + ty];
  let inv_bottom = pt[KEYS * QUADS + 16u + ty];
// #include "flash_store_acc.wgsl"
