// The start of main in every dp4a tile (dp4a_setup.wgsl, dp4a_setup_pipelined.wgsl): the tile of c
// this workgroup computes, at (row0, col0), tiles beyond 65,535 folded into y and a workgroup past
// the last tile returning; invocation (tx, ty) = (lid % 16, lid / 16), owner of rows 4ty..4ty+3 and
// HALF * 4 rows below them, and of columns 4tx..4tx+3 (and, in the 128 x 128 tiles, the four 64
// columns to the right); and the words of four codes per row of a. Needs main's wid, groups and
// lid, params (m, n, k) and the tile's TILE.
  let tiles_n = (params.n + TILE - 1u) / TILE;
  let tiles = ((params.m + TILE - 1u) / TILE) * tiles_n;
  let tile = wid.x + wid.y * groups.x;
  if (tile >= tiles) {
    return;
  }
  let row0 = (tile / tiles_n) * TILE;
  let col0 = (tile % tiles_n) * TILE;
  let tx = lid % 16u;
  let ty = lid / 16u;
  let words = (params.k + 3u) / 4u; // words of four codes per row of a
