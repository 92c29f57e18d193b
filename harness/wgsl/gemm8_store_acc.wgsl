// Stores the accumulators (gemm8_acc.wgsl) through store_quad(group, channel, first column, values).
  store_quad(g, top + 0u, left, acc0_left);
  store_quad(g, top + 0u, right, acc0_right);
  store_quad(g, top + 1u, left, acc1_left);
  store_quad(g, top + 1u, right, acc1_right);
  store_quad(g, top + 2u, left, acc2_left);
  store_quad(g, top + 2u, right, acc2_right);
  store_quad(g, top + 3u, left, acc3_left);
  store_quad(g, top + 3u, right, acc3_right);
  store_quad(g, bottom + 0u, left, acc4_left);
  store_quad(g, bottom + 0u, right, acc4_right);
  store_quad(g, bottom + 1u, left, acc5_left);
  store_quad(g, bottom + 1u, right, acc5_right);
  store_quad(g, bottom + 2u, left, acc6_left);
  store_quad(g, bottom + 2u, right, acc6_right);
  store_quad(g, bottom + 3u, left, acc7_left);
  store_quad(g, bottom + 3u, right, acc7_right);
