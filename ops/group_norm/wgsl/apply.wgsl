// group_norm/apply: the second of the split path's two dispatches, after group_norm/stats. One
// workgroup per block of WG * PER quads (aligned) or elements (ragged) of a row, rows times
// params.blocks of them (folded into y beyond 65,535). Each issues its block's loads, then merges the
// row's params.chunks summaries from partials (one per invocation, then the workgroup's tree of Chan
// merges: every workgroup of a row merges them in the same order, so all of them normalise with the
// same mean and variance) while those loads are in flight, and writes the block normalised with the
// channel's weight and bias.
// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> partials: array<vec4f>;  // (count, mean, M2, unused)
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(5) var<uniform> params: Params;

// #include "summary.wgsl"

// #include "normalise.wgsl"

// The row's mean and 1 / sqrt(var + eps), from its pieces' summaries.
fn row_stats(row: u32, lid: u32) -> vec2f {
  var mine = vec3f(0.0);
  for (var piece = lid; piece < params.chunks; piece += WG) {
    mine = merge(mine, partials[row * params.chunks + piece].xyz);
  }
  let stats = reduce_summary(mine, lid);
  return vec2f(stats.y, inverseSqrt(stats.z / stats.x + params.eps));
}

fn aligned(row: u32, j: u32, lid: u32) {
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

fn ragged(row: u32, j: u32, lid: u32) {
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

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let slot = wid.x + wid.y * grid.x;
  if (slot >= params.rows * params.blocks) {
    return;
  }
  let row = slot / params.blocks;
  let j = (slot % params.blocks) * WG * PER + lid;
  if (params.d % 4u == 0u && params.l % 4u == 0u) {
    aligned(row, j, lid);
  } else {
    ragged(row, j, lid);
  }
}
