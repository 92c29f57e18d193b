// The start of main in the single-stage dp4a tiles (q8row_dp4a, q4g128_dp4a, their _tile64 kernels
// and the fused forms of all four): dp4a_origin.wgsl's tile and invocation, and what each
// invocation stages per step: STAGE_WORDS consecutive words (from stage_w) of one row (stage_row) of
// a's block and of the same row of the weight's block, two invocations to a row. Needs main's wid,
// groups and lid, params (m, n, k) and the tile's constants (dp4a_tile64.wgsl or dp4a_tile128.wgsl).
// #include "dp4a_origin.wgsl"
  let stage_row = lid / 2u;
  let stage_w = (lid % 2u) * STAGE_WORDS;
