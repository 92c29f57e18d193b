// The end of main in flash_attention's kernels, after the last block: each statistics invocation
// turns its row's sum into 1 / sum (0 for a row with no live key) in slot KEYS of `pt`, and after a
// barrier every output invocation writes its 8 x 8 outputs (gemm_acc8x8.wgsl) times those factors
// through store (flash_store.wgsl). Needs row0, bh, own_quad, own_lane, run_sum, tx, ty, dv_left and
// dv_right of main.
  // The sums, through slot KEYS: 1 / sum per row, 0 for a row with no live key.
  if (lid < ROWS) {
    pt[KEYS * QUADS + own_quad][own_lane] = select(1.0 / run_sum, 0.0, run_sum == 0.0);
  }
  workgroupBarrier();
  let inv_top = pt[KEYS * QUADS + ty];
  let inv_bottom = pt[KEYS * QUADS + 16u + ty];
  let top = row0 + 4u * ty;
  let bottom = row0 + 64u + 4u * ty;
  let base = bh * params.L;
  store(base, top, dv_left, acc0_left * inv_top.x);
  store(base, top + 1u, dv_left, acc1_left * inv_top.y);
  store(base, top + 2u, dv_left, acc2_left * inv_top.z);
  store(base, top + 3u, dv_left, acc3_left * inv_top.w);
  store(base, bottom, dv_left, acc4_left * inv_bottom.x);
  store(base, bottom + 1u, dv_left, acc5_left * inv_bottom.y);
  store(base, bottom + 2u, dv_left, acc6_left * inv_bottom.z);
  store(base, bottom + 3u, dv_left, acc7_left * inv_bottom.w);
  store(base, top, dv_right, acc0_right * inv_top.x);
  store(base, top + 1u, dv_right, acc1_right * inv_top.y);
  store(base, top + 2u, dv_right, acc2_right * inv_top.z);
  store(base, top + 3u, dv_right, acc3_right * inv_top.w);
  store(base, bottom, dv_right, acc4_right * inv_bottom.x);
  store(base, bottom + 1u, dv_right, acc5_right * inv_bottom.y);
  store(base, bottom + 2u, dv_right, acc6_right * inv_bottom.z);
  store(base, bottom + 3u, dv_right, acc7_right * inv_bottom.w);
