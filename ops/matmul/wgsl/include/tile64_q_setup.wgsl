// The tile of c this workgroup computes, at (row0, col0): tiles beyond 65,535 fold into y, and a
// workgroup past the last tile returns. Invocation (tx, ty) owns rows 4ty..4ty+3 and columns
// 4tx..4tx+3 of it, in acc0-3, and stages four consecutive k (stage_k) of one row (stage_row) of
// a's block and of the same row of the weight's block.
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
