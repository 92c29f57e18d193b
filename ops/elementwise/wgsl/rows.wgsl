// elementwise/rows: out[s, d] = a[s, d] (+|*) b[d], a is [S, D] and b is [D] (broadcast from the right).
struct Params {
  n: u32,      // S * D
  d: u32,      // D
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
  let rhs = b[i % params.d];
  if (params.op == 0u) {
    out[i] = a[i] + rhs;
  } else {
    out[i] = a[i] * rhs;
  }
}
