// elementwise/kernel: out[i] = a[i] (+|*) b[i] over two equally sized arrays.
// One element per invocation; the workgroup grid may be folded into y when it exceeds 65,535.
struct Params {
  n: u32,      // elements
  op: u32,     // 0 = add, 1 = multiply
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.n) {
    return;
  }
  if (params.op == 0u) {
    out[i] = a[i] + b[i];
  } else {
    out[i] = a[i] * b[i];
  }
}
