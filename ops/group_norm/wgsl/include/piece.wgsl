// The statistics of one piece of a row, shared by group_norm/stats and group_norm/fused: piece
// `piece` of row `row` is params.span quads (aligned) or elements (ragged), the last piece shorter;
// its (count, mean, M2) summary, merged over the workgroup, is given to every invocation. Called
// once per workgroup, in uniform control flow. Needs summary.wgsl.
fn piece_summary(row: u32, piece: u32, lid: u32) -> vec3f {
  let begin = piece * params.span;
  var mine: vec3f;
  if (params.d % 4u == 0u && params.l % 4u == 0u) {
    let quads = params.d / 4u;
    mine = aligned_summary(row * quads, begin, min(begin + params.span, quads), lid);
  } else {
    mine = ragged_summary(row * params.d, begin, min(begin + params.span, params.d), lid);
  }
  return reduce_summary(mine, lid);
}
