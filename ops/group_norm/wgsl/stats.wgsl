// group_norm/stats: the first of the split path's two dispatches (mod.ts says when that path is
// taken: few rows, each longer than one block). Each row (params.wgsl) is cut into params.chunks pieces of
// params.span quads (aligned) or elements (ragged); one workgroup per (row, piece), rows times pieces
// of them (folded into y beyond 65,535), writes its piece's (count, mean, M2) summary (piece.wgsl,
// summary.wgsl: Chan et al.'s merges, stable at 100 +- 1) to partials[row * chunks + piece].
// group_norm/apply merges a row's summaries the same way and normalises.
// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> partials: array<vec4f>;  // (count, mean, M2, unused)
@group(0) @binding(2) var<uniform> params: Params;

// #include "summary.wgsl"

// #include "piece.wgsl"

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
  let summary = piece_summary(slot / params.chunks, slot % params.chunks, lid);
  if (lid == 0u) {
    partials[slot] = vec4f(summary, 0.0);
  }
}
