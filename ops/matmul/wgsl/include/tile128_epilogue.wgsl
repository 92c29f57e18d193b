// The fused epilogue (epilogue.wgsl) of a 128 x 128 tile, applied in place to this invocation's
// sixteen accumulators (gemm_acc8x8.wgsl) before they are stored: rows 4ty..4ty+3 and
// 64+4ty..64+4ty+3, columns 4tx..4tx+3 and 64+4tx..64+4tx+3 of the tile at (row0, col0).
  {
    let top_row = row0 + ty * 4u;
    let bottom_row = top_row + 64u;
    let left_col = col0 + tx * 4u;
    let right_col = left_col + 64u;
    acc0_left = epilogue(top_row, left_col, acc0_left);
    acc0_right = epilogue(top_row, right_col, acc0_right);
    acc1_left = epilogue(top_row + 1u, left_col, acc1_left);
    acc1_right = epilogue(top_row + 1u, right_col, acc1_right);
    acc2_left = epilogue(top_row + 2u, left_col, acc2_left);
    acc2_right = epilogue(top_row + 2u, right_col, acc2_right);
    acc3_left = epilogue(top_row + 3u, left_col, acc3_left);
    acc3_right = epilogue(top_row + 3u, right_col, acc3_right);
    acc4_left = epilogue(bottom_row, left_col, acc4_left);
    acc4_right = epilogue(bottom_row, right_col, acc4_right);
    acc5_left = epilogue(bottom_row + 1u, left_col, acc5_left);
    acc5_right = epilogue(bottom_row + 1u, right_col, acc5_right);
    acc6_left = epilogue(bottom_row + 2u, left_col, acc6_left);
    acc6_right = epilogue(bottom_row + 2u, right_col, acc6_right);
    acc7_left = epilogue(bottom_row + 3u, left_col, acc7_left);
    acc7_right = epilogue(bottom_row + 3u, right_col, acc7_right);
  }
