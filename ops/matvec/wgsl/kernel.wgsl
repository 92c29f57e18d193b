// matvec/kernel: y[n] = sum_k weight[n, k] * x[k]; weight is [N, K] f32 row-major, x is [K] (torch.mv).
// Streaming, not tiled: every weight is read once and nothing is reused but x.
// Four rows per workgroup, 64 invocations per row. Each invocation sums a strided slice of its row
// (split-K, so neighbouring invocations read neighbouring addresses), then the row's 64 partial sums
// are reduced in workgroup memory. When K % 4 == 0 every row starts on a 16-byte boundary and is
// read as vec4s; otherwise element by element, as components of the same vec4 bindings.
// More than 65,535 workgroups fold into y: group = id.x + id.y * num_workgroups.x, rows bound-checked.
struct Params {
  n: u32,  // rows of weight, length of y
  k: u32,  // columns of weight, length of x
}

@group(0) @binding(0) var<storage, read> weight: array<vec4f>;
@group(0) @binding(1) var<storage, read> x: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const LANES = 64u;  // invocations per row
const ROWS = 4u;    // rows per workgroup

var<workgroup> partial: array<f32, LANES * ROWS>;

@compute @workgroup_size(64, 4)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
  let row = (wid.x + wid.y * groups.x) * ROWS + lid.y;
  let lane = lid.x;
  let k = params.k;
  var acc = 0.0;
  if (row < params.n) {
    if (k % 4u == 0u) {
      let quads = k / 4u;
      let base = row * quads;
      for (var i = lane; i < quads; i += LANES) {
        acc += dot(weight[base + i], x[i]);
      }
    } else {
      let base = row * k;
      for (var c = lane; c < k; c += LANES) {
        let e = base + c;
        acc += weight[e / 4u][e % 4u] * x[c / 4u][c % 4u];
      }
    }
  }

  let slot = lid.y * LANES + lane;
  partial[slot] = acc;
  workgroupBarrier();
  for (var stride = LANES / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      partial[slot] += partial[slot + stride];
    }
    workgroupBarrier();
  }
  if (lane == 0u && row < params.n) {
    y[row] = partial[slot];
  }
}
