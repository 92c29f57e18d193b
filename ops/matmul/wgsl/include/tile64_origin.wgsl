// The start of main in matmul's f32 64 x 64 tiles (tile64, linear_tile64 and their fused kernels):
// the tile of c this workgroup computes, at (row0, col0), tiles beyond 65,535 folded into y and a
// workgroup past the last tile returning; this invocation's (tx, ty) = (lid % 16, lid / 16), owner of
// rows 4ty..4ty+3 and 32+4ty..32+4ty+3 and columns 4tx..4tx+3; and what it stages of a per block:
// four consecutive k (from a_k) of rows a_row and a_row + 32 of a's block (the Linear kernels stage
// the same two rows of the weight's). Needs main's wid, groups and lid, params (m, n) and the tile's
// TILE_M, TILE_N and LANES.
  let tiles_n = (params.n + TILE_N - 1u) / TILE_N;
  let tiles = ((params.m + TILE_M - 1u) / TILE_M) * tiles_n;
  let tile = wid.x + wid.y * groups.x;
  if (tile >= tiles) {
    return;
  }
  let row0 = (tile / tiles_n) * TILE_M;
  let col0 = (tile % tiles_n) * TILE_N;
  let tx = lid % LANES;
  let ty = lid / LANES;
  let a_row = lid / 4u;
  let a_k = (lid % 4u) * 4u;
