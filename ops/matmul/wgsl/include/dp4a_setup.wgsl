// The start of main in the dp4a tiles: the tile of c this workgroup computes, at (row0, col0), tiles
// beyond 65,535 folded into y and a workgroup past the last tile returning; invocation
// (tx, ty) = (lid % 16, lid / 16), owner of rows 4ty..4ty+3 and HALF * 4 rows below them, and of
// columns 4tx..4tx+3 (and, in the 128 x 128 tile, the four 64 columns to the right); and what it
// stages per step: STAGE_WORDS consecutive words (from stage_w) of one row (stage_row) of a's block
// and of the same row of the weight's block. Needs main's wid, groups and lid, params (m, n) and the
// tile's constants (dp4a_tile64.wgsl or dp4a_tile128.wgsl).
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
  let stage_row = lid / 2u;
  let stage_w = (lid % 2u) * STAGE_WORDS;
  let words = (params.k + 3u) / 4u; // words of four codes per row of a
