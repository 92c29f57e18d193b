// layernorm/kernel: out[n, c] = (x[n, c] - mean) * inverseSqrt(var + eps) * weight[c] + bias[c],
// x is [rows, d], var the biased variance (divided by d); has_weight / has_bias = 0 mean ones / zeros.
// One workgroup per row. Each invocation keeps a running count, mean and sum of squared deviations
// (Welford's update) over the elements it visits with stride 256, so rows of any length work; the
// workgroup then merges those triples pairwise in workgroup memory. The row is read twice: once for
// the statistics, once to write. Every value is first shifted by the row's first element, so a row
// like 1000 + noise is summed as small numbers and its mean is not rounded at the scale of 1000.
// Rows beyond 65,535 fold into y: row = id.x + id.y * num_workgroups.x, bound-checked.
struct Params {
  rows: u32,
  d: u32,
  has_weight: u32,
  has_bias: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

const WORKGROUP = 256u;

var<workgroup> counts: array<u32, WORKGROUP>;
var<workgroup> means: array<f32, WORKGROUP>;
var<workgroup> deviations: array<f32, WORKGROUP>;

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
  let shift = x[base];

  var count = 0u;
  var mean = 0.0;
  var squared_deviations = 0.0;
  for (var c = lid; c < d; c += WORKGROUP) {
    let v = x[base + c] - shift;
    count += 1u;
    let delta = v - mean;
    mean += delta / f32(count);
    squared_deviations += delta * (v - mean);
  }
  counts[lid] = count;
  means[lid] = mean;
  deviations[lid] = squared_deviations;
  workgroupBarrier();
  for (var stride = WORKGROUP / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride && counts[lid + stride] > 0u) {
      let own = f32(counts[lid]);
      let other = f32(counts[lid + stride]);
      let other_share = other / (own + other);
      let delta = means[lid + stride] - means[lid];
      means[lid] += delta * other_share;
      deviations[lid] += deviations[lid + stride] + delta * delta * own * other_share;
      counts[lid] += counts[lid + stride];
    }
    workgroupBarrier();
  }
  let shifted_mean = means[0];
  let scale = inverseSqrt(deviations[0] / f32(d) + params.eps);

  for (var c = lid; c < d; c += WORKGROUP) {
    var y = (x[base + c] - shift - shifted_mean) * scale;
    if (params.has_weight != 0u) {
      y *= weight[c];
    }
    if (params.has_bias != 0u) {
      y += bias[c];
    }
    out[base + c] = y;
  }
}
