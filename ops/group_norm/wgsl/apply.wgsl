// group_norm/apply: the second of the split path's two dispatches, after group_norm/stats. One
// workgroup per block of WG * PER quads (aligned) or elements (ragged) of a row, rows times
// params.blocks of them (folded into y beyond 65,535). Each issues its block's loads, then merges the
// row's params.chunks summaries from partials (one per invocation, then the workgroup's tree of Chan
// merges: every workgroup of a row merges them in the same order, so all of them normalise with the
// same mean and variance) while those loads are in flight, and writes the block normalised with the
// channel's weight and bias (include/block.wgsl).
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

// #include "block.wgsl"

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
  normalise_block(slot / params.blocks, slot % params.blocks, lid);
}
