// The fused epilogue (epilogue.wgsl) of a 64 x 64 quantized tile, applied in place to this
// invocation's four accumulators (tile64_q_setup.wgsl) before they are stored: rows 4ty..4ty+3,
// columns 4tx..4tx+3 of the tile at (row0, col0).
  {
    let row = row0 + ty * 4u;
    let col = col0 + tx * 4u;
    acc0 = epilogue(row, col, acc0);
    acc1 = epilogue(row + 1u, col, acc1);
    acc2 = epilogue(row + 2u, col, acc2);
    acc3 = epilogue(row + 3u, col, acc3);
  }
