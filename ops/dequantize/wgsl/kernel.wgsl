// dequantize/kernel: out[m, n] = (f32(acc[m, n]) * a_scales[m]) * w_scales[n], acc [M, N] int32,
// a_scales [M], w_scales [N]; each step rounded to nearest f32, left to right.
// One element per invocation; a grid over 65,535 workgroups folds into a second dimension.
struct Params {
  n_total: u32,  // M * N
  cols: u32,     // N
}

@group(0) @binding(0) var<storage, read> acc: array<i32>;
@group(0) @binding(1) var<storage, read> a_scales: array<f32>;
@group(0) @binding(2) var<storage, read> w_scales: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

// v rounded to the nearest f32, ties to even. WGSL leaves the direction of f32(i32) unspecified
// above 2^24, so v is split into two parts that convert exactly, and the one rounding is the
// (correctly rounded) addition.
fn to_f32_nearest(v: i32) -> f32 {
  let high = f32(v >> 16u) * 65536.0;
  let low = f32(v & 0xffff);
  return high + low;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.n_total) {
    return;
  }
  let m = i / params.cols;
  let n = i - m * params.cols;
  out[i] = (to_f32_nearest(acc[i]) * a_scales[m]) * w_scales[n];
}
