// The fused epilogue (epilogue.wgsl) of a 64 x 64 tile of 8 x 4 outputs per invocation (the f32
// tiles' and the dp4a tiles'), applied in place to this invocation's eight accumulators
// (gemm64_acc.wgsl's names) before they are stored: rows 4ty..4ty+3 and 32+4ty..32+4ty+3,
// columns 4tx..4tx+3 of the tile at (row0, col0).
  {
    let top_row = row0 + ty * 4u;
    let bottom_row = top_row + 32u;
    let col = col0 + tx * 4u;
    acc0 = epilogue(top_row, col, acc0);
    acc1 = epilogue(top_row + 1u, col, acc1);
    acc2 = epilogue(top_row + 2u, col, acc2);
    acc3 = epilogue(top_row + 3u, col, acc3);
    acc4 = epilogue(bottom_row, col, acc4);
    acc5 = epilogue(bottom_row + 1u, col, acc5);
    acc6 = epilogue(bottom_row + 2u, col, acc6);
    acc7 = epilogue(bottom_row + 3u, col, acc7);
  }
