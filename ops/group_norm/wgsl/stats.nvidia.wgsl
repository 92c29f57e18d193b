// group_norm/stats.nvidia (measurement only): group_norm/stats with each block's loads issued before
// the previous block's arithmetic.
// group_norm/stats: the first of the split path's two dispatches (mod.ts takes it when rows are too
// few to fill the GPU one workgroup each). Each row (params.wgsl) is cut into params.chunks pieces of
// params.span quads (aligned) or elements (ragged); one workgroup per (row, piece), rows times pieces
// of them (folded into y beyond 65,535), writes its piece's (count, mean, M2) summary (summary.wgsl:
// Chan et al.'s merges, stable at 100 +- 1) to partials[row * chunks + piece]. group_norm/apply
// merges a row's summaries the same way and normalises.
// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> partials: array<vec4f>;  // (count, mean, M2, unused)
@group(0) @binding(2) var<uniform> params: Params;

// #include "summary.wgsl"

fn aligned_summary_ahead(first: u32, begin: u32, end: u32, lid: u32) -> vec3f {
  let last = first + end - 1u;
  var summary = vec3f(0.0);
  var j = begin + lid;
  var v0 = x[min(first + j, last)];
  var v1 = x[min(first + j + WG, last)];
  var v2 = x[min(first + j + 2u * WG, last)];
  var v3 = x[min(first + j + 3u * WG, last)];
  loop {
    let k = j + WG * PER;
    let n0 = x[min(first + k, last)];
    let n1 = x[min(first + k + WG, last)];
    let n2 = x[min(first + k + 2u * WG, last)];
    let n3 = x[min(first + k + 3u * WG, last)];
    summary = merge(summary, chunk(v0, v1, v2, v3, in_range(j, end), in_range(j + WG, end),
      in_range(j + 2u * WG, end), in_range(j + 3u * WG, end)));
    if (k - lid >= end) {
      break;
    }
    v0 = n0;
    v1 = n1;
    v2 = n2;
    v3 = n3;
    j = k;
  }
  return summary;
}

fn ragged_summary_ahead(first: u32, begin: u32, end: u32, lid: u32) -> vec3f {
  let last = first + end - 1u;
  var summary = vec3f(0.0);
  var j = begin + lid;
  var v = vec4f(element(min(first + j, last)), element(min(first + j + WG, last)),
    element(min(first + j + 2u * WG, last)), element(min(first + j + 3u * WG, last)));
  loop {
    let k = j + WG * PER;
    let n = vec4f(element(min(first + k, last)), element(min(first + k + WG, last)),
      element(min(first + k + 2u * WG, last)), element(min(first + k + 3u * WG, last)));
    let mask = select(vec4f(0.0), vec4f(1.0), vec4u(j, j + WG, j + 2u * WG, j + 3u * WG) < vec4u(end));
    summary = merge(summary, chunk(v, vec4f(0.0), vec4f(0.0), vec4f(0.0), mask, vec4f(0.0), vec4f(0.0),
      vec4f(0.0)));
    if (k - lid >= end) {
      break;
    }
    v = n;
    j = k;
  }
  return summary;
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
  var mine: vec3f;
  if (params.d % 4u == 0u && params.l % 4u == 0u) {
    let quads = params.d / 4u;
    mine = aligned_summary_ahead(row * quads, begin, min(begin + params.span, quads), lid);
  } else {
    mine = ragged_summary_ahead(row * params.d, begin, min(begin + params.span, params.d), lid);
  }
  let summary = reduce_summary(mine, lid);
  if (lid == 0u) {
    partials[slot] = vec4f(summary, 0.0);
  }
}
