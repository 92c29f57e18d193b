// The stores at the end of main in the 64 x 64 tile: the accumulators of gemm64_acc.wgsl through the
// kernel's store_c(row, col, v) (four consecutive columns from col, those outside c skipped). Needs
// row0, col0, tx and ty of main.
  let top_row = row0 + ty * 4u;
  let bottom_row = top_row + 32u;
  let col = col0 + tx * 4u;
  store_c(top_row, col, acc0);
  store_c(top_row + 1u, col, acc1);
  store_c(top_row + 2u, col, acc2);
  store_c(top_row + 3u, col, acc3);
  store_c(bottom_row, col, acc4);
  store_c(bottom_row + 1u, col, acc5);
  store_c(bottom_row + 2u, col, acc6);
  store_c(bottom_row + 3u, col, acc7);
