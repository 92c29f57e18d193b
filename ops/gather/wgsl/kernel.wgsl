// gather/kernel: out[n, d] = table[indices[n], d], or 0 when indices[n] is outside [0, V).
// One output element per invocation; the workgroup grid may be folded into y when it exceeds 65,535.
struct Params {
  total: u32,  // N * D, output elements
  d: u32,      // D, columns
  v: u32,      // V, table rows (< 2^31)
}

@group(0) @binding(0) var<storage, read> table: array<f32>;
@group(0) @binding(1) var<storage, read> indices: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.total) {
    return;
  }
  let n = i / params.d;
  let column = i - n * params.d;
  // A negative index reinterpreted as u32 is at least 2^31 > V, so one comparison rejects both ends.
  let row = bitcast<u32>(indices[n]);
  var value = 0.0;
  if (row < params.v) {
    value = table[row * params.d + column];
  }
  out[i] = value;
}
