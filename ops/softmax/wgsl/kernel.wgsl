// softmax/kernel: out[r, c] = exp(x[r, c] - max_r) / sum_c exp(x[r, c] - max_r), x is [rows, cols].
// One workgroup per row; each invocation walks the row with stride 256, so rows of any length work.
// Each invocation keeps a running (max, sum) over its elements, rescaling the sum when the max
// grows; the workgroup reduces the maxima, rescales every partial sum to the row's maximum and
// reduces the sums. The row is read twice: once for (max, sum), once to write the output.
// Rows beyond 65,535 fold into y: row = id.x + id.y * num_workgroups.x, bound-checked.
struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP = 256u;
// The starting maximum, the lowest finite f32 (WGSL has no infinity literal). A row of nothing but
// -inf never raises it, so every exp(x - max) is 0, the sum is 0, and 0 / 0 gives NaN, as torch does.
const LOWEST = -0x1.fffffep+127f;

var<workgroup> maxima: array<f32, WORKGROUP>;
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
  let cols = params.cols;
  let base = row * cols;

  var running_max = LOWEST;
  var running_sum = 0.0;
  for (var c = lid; c < cols; c += WORKGROUP) {
    let v = x[base + c];
    if (v > running_max) {
      running_sum = running_sum * exp(running_max - v) + 1.0;
      running_max = v;
    } else {
      running_sum += exp(v - running_max);
    }
  }

  maxima[lid] = running_max;
  workgroupBarrier();
  for (var stride = WORKGROUP / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      maxima[lid] = max(maxima[lid], maxima[lid + stride]);
    }
    workgroupBarrier();
  }
  let row_max = maxima[0];

  sums[lid] = running_sum * exp(running_max - row_max);
  workgroupBarrier();
  for (var stride = WORKGROUP / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      sums[lid] += sums[lid + stride];
    }
    workgroupBarrier();
  }
  let total = sums[0];

  for (var c = lid; c < cols; c += WORKGROUP) {
    out[base + c] = exp(x[base + c] - row_max) / total;
  }
}
