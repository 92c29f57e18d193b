// The stores at the end of main in the 64 x 64 quantized tiles: acc0-3 (tile64_q_setup.wgsl), rows
// 4ty..4ty+3 and columns 4tx..4tx+3 of the tile at (row0, col0), through the kernel's store_c.
  let row = row0 + ty * 4u;
  let col = col0 + tx * 4u;
  store_c(row, col, acc0);
  store_c(row + 1u, col, acc1);
  store_c(row + 2u, col, acc2);
  store_c(row + 3u, col, acc3);
