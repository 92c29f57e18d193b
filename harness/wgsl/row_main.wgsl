// The entry point of rmsnorm and layernorm: rows of d % 4 != 0 elements take `ragged`; the others
// `params.threads` invocations a row, the row kept in registers (`resident_aligned`) or read twice
// (`streamed_aligned`), as `params.resident` says.
@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let block = wid.x + wid.y * grid.x;
  if (params.d % 4u != 0u) {
    ragged(block, lid);
    return;
  }
  let t = params.threads;
  let row = block * (WORKGROUP / t) + lid / t;
  if (params.resident != 0u) {
    resident_aligned(row, lid % t, lid, t);
  } else {
    streamed_aligned(row, lid % t, lid, t);
  }
}
