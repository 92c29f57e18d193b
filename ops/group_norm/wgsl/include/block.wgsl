// The normalisation of one block of a row, shared by group_norm/apply and group_norm/fused: block
// `block` of row `row` is WG * PER quads (aligned) or elements (ragged). The workgroup issues its
// block's loads, then takes the row's mean and 1 / sqrt(var + eps) from `row_stats(row, lid) ->
// vec2f`, which the including kernel defines (called once per workgroup, in uniform control flow,
// while the loads are in flight), and writes the block normalised with the channel's weight and
// bias (normalise.wgsl).
fn aligned_block(row: u32, j: u32, lid: u32) {
  let quads = params.d / 4u;
  let first = row * quads;
  let last = first + quads - 1u;
  let v0 = x[min(first + j, last)];
  let v1 = x[min(first + j + WG, last)];
  let v2 = x[min(first + j + 2u * WG, last)];
  let v3 = x[min(first + j + 3u * WG, last)];
  let stats = row_stats(row, lid);
  let channel0 = (row % params.groups) * params.per_group;
  put_quad(first, j, quads, v0, stats.x, stats.y, channel0);
  put_quad(first, j + WG, quads, v1, stats.x, stats.y, channel0);
  put_quad(first, j + 2u * WG, quads, v2, stats.x, stats.y, channel0);
  put_quad(first, j + 3u * WG, quads, v3, stats.x, stats.y, channel0);
}

fn ragged_block(row: u32, j: u32, lid: u32) {
  let first = row * params.d;
  let last = first + params.d - 1u;
  let v0 = element(min(first + j, last));
  let v1 = element(min(first + j + WG, last));
  let v2 = element(min(first + j + 2u * WG, last));
  let v3 = element(min(first + j + 3u * WG, last));
  let stats = row_stats(row, lid);
  let channel0 = (row % params.groups) * params.per_group;
  put_element(first, j, params.d, v0, stats.x, stats.y, channel0);
  put_element(first, j + WG, params.d, v1, stats.x, stats.y, channel0);
  put_element(first, j + 2u * WG, params.d, v2, stats.x, stats.y, channel0);
  put_element(first, j + 3u * WG, params.d, v3, stats.x, stats.y, channel0);
}

fn normalise_block(row: u32, block: u32, lid: u32) {
  let j = block * WG * PER + lid;
  if (params.d % 4u == 0u && params.l % 4u == 0u) {
    aligned_block(row, j, lid);
  } else {
    ragged_block(row, j, lid);
  }
}
