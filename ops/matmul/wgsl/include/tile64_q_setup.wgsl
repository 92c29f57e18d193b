// The start of main in the 64 x 64 quantized tiles (q4g128_tile64, q8row_tile64, their fused kernels): the tile of c this
// workgroup computes, at (row0, col0), tiles beyond 65,535 folded into y and a workgroup past the last
// tile returning; invocation (tx, ty) = (lid % 16, lid / 16), owner of rows 4ty..4ty+3 and columns
// 4tx..4tx+3 of the tile in acc0-3 (declared here, one vec4 per row); and what it stages per step,
// four consecutive k (from stage_k) of one row (stage_row) of a's block and of the same row of the
// weight's block. Needs main's wid, groups and lid, params (m, n) and the kernels' TILE and LANES.
  let tiles_n = (params.n + TILE - 1u) / TILE;
  let tiles = ((params.m + TILE - 1u) / TILE) * tiles_n;
  let tile = wid.x + wid.y * groups.x;
  if (tile >= tiles) {
    return;
  }
  let row0 = (tile / tiles_n) * TILE;
  let col0 = (tile % tiles_n) * TILE;
  let tx = lid % LANES;
  let ty = lid / LANES;

  // What this invocation stages: four consecutive k of one row of a's block and of the same row of
  // the weight's block.
  let stage_row = lid / 4u;
  let stage_k = (lid % 4u) * 4u;

  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
