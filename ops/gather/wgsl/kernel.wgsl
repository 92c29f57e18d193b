// gather/kernel: out[n, d] = table[index[n], d], or 0 when index[n] is outside [0, rows).
// One output element per invocation; the workgroup grid may be folded into y when it exceeds 65,535.
struct Params {
  total: u32,  // indexLength * cols, output elements
  d: u32,      // cols, columns
  v: u32,      // rows, table rows (< 2^31)
}

@group(0) @binding(0) var<storage, read> table: array<f32>;
@group(0) @binding(1) var<storage, read> index: array<i32>;
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
  // A negative index reinterpreted as u32 is at least 2^31 > rows, so one comparison rejects both ends.
  let row = bitcast<u32>(index[n]);
  var value = 0.0;
  if (row < params.v) {
    value = table[row * params.d + column];
  }
  out[i] = value;
}
