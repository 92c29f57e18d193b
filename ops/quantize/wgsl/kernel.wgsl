// quantize/kernel: per-row absmax int8 quantization. x is [rows, cols]; for each row,
// scales[row] = absmax / 127 and codes[row, c] = round(x[row, c] * 127 / absmax), ties toward
// +Infinity; a row of zeros gets scale 0 and codes 0.
// One workgroup per row: each invocation takes the largest |x| of its strided share of the row,
// so rows of any length work, and the workgroup reduces those; then it writes the codes. Rows
// beyond 65,535 fold into y: row = id.x + id.y * num_workgroups.x.
//
// The code and the scale are decided exactly, in integer arithmetic on the f32 bit patterns
// (exact_code.wgsl, exact_scale.wgsl: WGSL's division may be 2.5 ULP off), so every device
// agrees with the f64 reference; an f32 quotient would round x * 127 / absmax onto a half-integer
// it is not on. absmax is found exactly too: for non-negative floats, the order of their bit
// patterns as u32 is the order of their values.
struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> codes: array<i32>;
@group(0) @binding(2) var<storage, read_write> scales: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const WORKGROUP = 256u;
const LEVELS = 127u;  // the largest code, for exact_code.wgsl

var<workgroup> maxima: array<u32, WORKGROUP>;

// #include "magnitude.wgsl"

// #include "exact_scale.wgsl"

// #include "exact_code.wgsl"

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

// #include "row_absmax.wgsl"

  if (lid == 0u) {
    scales[row] = exact_scale(absmax_bits);
  }
  for (var c = lid; c < cols; c += WORKGROUP) {
    codes[base + c] = exact_code(bitcast<u32>(x[base + c]), absmax_bits);
  }
}
