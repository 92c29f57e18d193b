// The entry point of gather's one-element-per-invocation kernels (kernel, q8row, q4g128): out[n, d] =
// element(table row index[n] - row0 of this block, d) for the indices in this dispatch's block, 0 for
// those outside [0, rows) when `first` is set, nothing for the others (their block's dispatch writes
// them). Expects of the including kernel the binding `index` (array<i32>), `out` (array<f32>), the
// uniform `params` with total, d, v, row0, block_rows and first, and `fn element(local: u32, column:
// u32) -> f32`, the value at column `column` of the block's row `local`.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.total) {
    return;
  }
  let n = i / params.d;
  let column = i - n * params.d;
  // A negative index reinterpreted as u32 is at least 2^31 > rows, so one comparison rejects both ends;
  // a row below row0 wraps past block_rows the same way.
  let row = bitcast<u32>(index[n]);
  let local = row - params.row0;
  if (row < params.v && local < params.block_rows) {
    out[i] = element(local, column);
  } else if (row >= params.v && params.first != 0u) {
    out[i] = 0.0;
  }
}
