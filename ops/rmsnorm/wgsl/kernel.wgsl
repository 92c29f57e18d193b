// rmsnorm/kernel: out[n, d] = x[n, d] * inverseSqrt(mean_d(x[n, d]^2) + eps) * weight[n % groups, d],
// x is [rows, d]; groups = 0 means no weight (ones).
// One workgroup per row; each invocation sums the squares of the row with stride 256, so rows of
// any length work, and the workgroup reduces the partial sums. The row is read twice: once for the
// sum of squares, once to write. Rows beyond 65,535 fold into y: row = id.x + id.y * num_workgroups.x.
struct Params {
  rows: u32,
  d: u32,
  groups: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const WORKGROUP = 256u;

var<workgroup> sums: array<f32, WORKGROUP>;

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * grid.x;
  if (row >= params.rows) {
    return;
  }
  let d = params.d;
  let base = row * d;

  var squares = 0.0;
  for (var c = lid; c < d; c += WORKGROUP) {
    let v = x[base + c];
    squares += v * v;
  }
  sums[lid] = squares;
  workgroupBarrier();
  for (var stride = WORKGROUP / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      sums[lid] += sums[lid + stride];
    }
    workgroupBarrier();
  }
  let scale = inverseSqrt(sums[0] / f32(d) + params.eps);

  if (params.groups == 0u) {
    for (var c = lid; c < d; c += WORKGROUP) {
      out[base + c] = x[base + c] * scale;
    }
    return;
  }
  let gamma = (row % params.groups) * d;
  for (var c = lid; c < d; c += WORKGROUP) {
    out[base + c] = x[base + c] * scale * weight[gamma + c];
  }
}
