// group_norm/apply: the second of the split path's two dispatches, after group_norm/stats, over the
// same (row, piece) grid. Each workgroup issues the loads of its piece's first block, then merges the
// row's params.chunks summaries from partials (one per invocation, then the workgroup's tree of Chan
// merges: every workgroup of a row merges them in the same order, so all of them normalise with the
// same mean and variance) while those loads are in flight, and writes its piece normalised with the
// channel's weight and bias, block after block.
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

fn aligned(row: u32, begin: u32, lid: u32) {
  let quads = params.d / 4u;
  let first = row * quads;
  let end = min(begin + params.span, quads);
  let last = first + end - 1u;
  let channel0 = (row % params.groups) * params.per_group;
  var j = begin + lid;
  var v0 = x[min(first + j, last)];
  var v1 = x[min(first + j + WG, last)];
  var v2 = x[min(first + j + 2u * WG, last)];
  var v3 = x[min(first + j + 3u * WG, last)];
  let stats = row_stats(row, lid);
  loop {
    put_quad(first, j, end, v0, stats.x, stats.y, channel0);
    put_quad(first, j + WG, end, v1, stats.x, stats.y, channel0);
    put_quad(first, j + 2u * WG, end, v2, stats.x, stats.y, channel0);
    put_quad(first, j + 3u * WG, end, v3, stats.x, stats.y, channel0);
    j += WG * PER;
    if (j - lid >= end) {
      break;
    }
    v0 = x[min(first + j, last)];
    v1 = x[min(first + j + WG, last)];
    v2 = x[min(first + j + 2u * WG, last)];
    v3 = x[min(first + j + 3u * WG, last)];
  }
}

fn ragged(row: u32, begin: u32, lid: u32) {
  let first = row * params.d;
  let end = min(begin + params.span, params.d);
  let last = first + end - 1u;
  let channel0 = (row % params.groups) * params.per_group;
  var j = begin + lid;
  var v = vec4f(element(min(first + j, last)), element(min(first + j + WG, last)),
    element(min(first + j + 2u * WG, last)), element(min(first + j + 3u * WG, last)));
  let stats = row_stats(row, lid);
  loop {
    put_element(first, j, end, v.x, stats.x, stats.y, channel0);
    put_element(first, j + WG, end, v.y, stats.x, stats.y, channel0);
    put_element(first, j + 2u * WG, end, v.z, stats.x, stats.y, channel0);
    put_element(first, j + 3u * WG, end, v.w, stats.x, stats.y, channel0);
    j += WG * PER;
    if (j - lid >= end) {
      break;
    }
    v = vec4f(element(min(first + j, last)), element(min(first + j + WG, last)),
      element(min(first + j + 2u * WG, last)), element(min(first + j + 3u * WG, last)));
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let slot = wid.x + wid.y * grid.x;
  if (slot >= params.rows * params.chunks) {
    return;
  }
  let row = slot / params.chunks;
  let begin = (slot % params.chunks) * params.span;
  if (params.d % 4u == 0u && params.l % 4u == 0u) {
    aligned(row, begin, lid);
  } else {
    ragged(row, begin, lid);
  }
}
