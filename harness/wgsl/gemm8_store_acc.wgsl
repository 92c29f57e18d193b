// Stores the accumulators of conv's and conv_transpose's GEMM tiles (gemm_acc8x8.wgsl), after main's
// loop over blocks, through the including kernel's store_quad(group, channel, first column, values):
// this invocation's output channels top.. and bottom.. (row0 + 4ty.., half a tile lower) at columns
// left.. and right.. (col0 + 4tx.., half a tile to the right). Needs row0, col0, tx, ty and g of
// main, and HALF_M and HALF_N of the kernel.
  let top = row0 + 4u * ty;
  let bottom = top + 4u * HALF_M;
  let left = col0 + 4u * tx;
  let right = left + 4u * HALF_N;
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
