// The setup at the start of main in conv's implicit-GEMM tiles (conv_gemm.wgsl and
// conv_gemm_pipelined.wgsl): which tile of which group this workgroup computes (returning from a
// surplus workgroup of a folded grid), the invocation's outputs (tx, ty), and where its staging reads:
// column b_col of the tile and its input position's origin (d0, h0, w0) and x_base, and row a_row of
// the weight (w_base). Needs wid, grid and lid of main, the tile's constants and conv_io.wgsl's.
  // Tiles beyond 65,535 fold into y. Output-channel tiles vary fastest, so neighbouring workgroups
  // read the same input columns.
  let tile = wid.x + wid.y * grid.x;
  let per_group = params.tiles_m * params.tiles_n;
  if (tile >= per_group * params.groups) {
    return;
  }
  let g = tile / per_group;
  let row0 = (tile % params.tiles_m) * TILE_M;
  let col0 = ((tile % per_group) / params.tiles_m) * TILE_N;
  let tx = lid % HALF_N;
  let ty = lid / HALF_N;

  // This invocation's staging of the input: column b_col of the tile, rows b_row + i * B_ROW_STEP.
  let b_col = lid % TILE_N;
  let b_row = lid / TILE_N;
  let col = col0 + b_col;
  let col_ok = col < params.cols;
  let position = min(col, params.cols - 1u) % params.out_sp;
  let sample = min(col, params.cols - 1u) / params.out_sp;
  let od = position / params.out_hw;
  let oh = (position % params.out_hw) / params.out_w;
  let ow = position % params.out_w;
  let x_base = (sample * params.cin + g * params.cin_g) * params.in_sp;
  let d0 = i32(od * params.stride_d) - i32(params.pad_d);
  let h0 = i32(oh * params.stride_h) - i32(params.pad_h);
  let w0 = i32(ow * params.stride_w) - i32(params.pad_w);

  // And of the weight: row a_row of the tile, block rows a_k + i * A_ROW_STEP.
  let a_row = lid % TILE_M;
  let a_k = lid / TILE_M;
  let a_ok = row0 + a_row < params.cout_g;
  let w_base = ((g * params.cout_g + min(row0 + a_row, params.cout_g - 1u)) * params.cin_g) * params.kvol;
