// The stores at the end of main in flash_attention's kernels: each output invocation's 8 x 8 outputs
// (gemm_acc8x8.wgsl: rows 4ty.. and ROWS / 2 + 4ty.. of the tile, column quads dv_left and dv_right)
// times their rows' 1 / sum (inv_top, inv_bottom) through store (flash_store.wgsl). Needs row0, q_base,
// ty, dv_left, dv_right, inv_top and inv_bottom of main and ROWS of the kernel.
  let top = row0 + 4u * ty;
  let bottom = row0 + ROWS / 2u + 4u * ty;
  store(q_base, top, dv_left, acc0_left * inv_top.x);
  store(q_base, top + 1u, dv_left, acc1_left * inv_top.y);
  store(q_base, top + 2u, dv_left, acc2_left * inv_top.z);
  store(q_base, top + 3u, dv_left, acc3_left * inv_top.w);
  store(q_base, bottom, dv_left, acc4_left * inv_bottom.x);
  store(q_base, bottom + 1u, dv_left, acc5_left * inv_bottom.y);
  store(q_base, bottom + 2u, dv_left, acc6_left * inv_bottom.z);
  store(q_base, bottom + 3u, dv_left, acc7_left * inv_bottom.w);
  store(q_base, top, dv_right, acc0_right * inv_top.x);
  store(q_base, top + 1u, dv_right, acc1_right * inv_top.y);
  store(q_base, top + 2u, dv_right, acc2_right * inv_top.z);
  store(q_base, top + 3u, dv_right, acc3_right * inv_top.w);
  store(q_base, bottom, dv_right, acc4_right * inv_bottom.x);
  store(q_base, bottom + 1u, dv_right, acc5_right * inv_bottom.y);
  store(q_base, bottom + 2u, dv_right, acc6_right * inv_bottom.z);
  store(q_base, bottom + 3u, dv_right, acc7_right * inv_bottom.w);
