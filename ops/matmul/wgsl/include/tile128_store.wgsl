// Stores the 128 x 128 tile's accumulators (gemm_acc8x8.wgsl) through the checked store_c: this
// invocation's rows 4ty..4ty+3 and 64+4ty..64+4ty+3, columns 4tx..4tx+3 and 64+4tx..64+4tx+3 of the
// tile at (row0, col0). The edge tiles of the kernels with an interior path
// (tile128_store_interior.wgsl) and every tile of q8row, q4g128, their dp4a forms and the fused
// kernels of all four end with it.
  let top_row = row0 + ty * 4u;
  let bottom_row = top_row + 64u;
  let left_col = col0 + tx * 4u;
  let right_col = left_col + 64u;
  store_c(top_row, left_col, acc0_left);
  store_c(top_row, right_col, acc0_right);
  store_c(top_row + 1u, left_col, acc1_left);
  store_c(top_row + 1u, right_col, acc1_right);
  store_c(top_row + 2u, left_col, acc2_left);
  store_c(top_row + 2u, right_col, acc2_right);
  store_c(top_row + 3u, left_col, acc3_left);
  store_c(top_row + 3u, right_col, acc3_right);
  store_c(bottom_row, left_col, acc4_left);
  store_c(bottom_row, right_col, acc4_right);
  store_c(bottom_row + 1u, left_col, acc5_left);
  store_c(bottom_row + 1u, right_col, acc5_right);
  store_c(bottom_row + 2u, left_col, acc6_left);
  store_c(bottom_row + 2u, right_col, acc6_right);
  store_c(bottom_row + 3u, left_col, acc7_left);
  store_c(bottom_row + 3u, right_col, acc7_right);
