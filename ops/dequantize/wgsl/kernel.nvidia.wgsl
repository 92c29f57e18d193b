// dequantize/kernel.nvidia: out[m, n] = (f32(acc[m, n]) * a_scales[m]) * w_scales[n], acc [M, N]
// int32, a_scales [M], w_scales [N]; each step rounded to nearest f32, left to right, as the portable
// kernel. Tuned for bandwidth.
//
// acc and out are streamed as vec4s: each invocation moves PER vec4s per block of WG * PER, all
// four loads issued before the first store, neighbouring invocations on neighbouring vec4s; blocks
// are dealt to workgroups in a grid-stride loop over however many workgroups the dispatch has, so
// the host never folds the grid (mod.ts dispatches min(blocks, 65,535)). When N is a multiple of 4,
// a vec4 lies in one row: one a_scales and four neighbouring w_scales (both small, and cached);
// otherwise each element finds its row and column. The M * N % 4 elements past the last whole vec4
// are written one component at a time, so nothing past element M * N - 1 is written. Bindings are
// 16-byte padded (ResidentDevice.alloc), so the last partial vec4 of acc is readable.
struct Params {
  n_total: u32,  // M * N
  cols: u32,     // N
}

@group(0) @binding(0) var<storage, read> acc: array<vec4i>;
@group(0) @binding(1) var<storage, read> a_scales: array<f32>;
@group(0) @binding(2) var<storage, read> w_scales: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(4) var<uniform> params: Params;

const WG: u32 = 256u;
const PER: u32 = 4u;

// v rounded to the nearest f32, ties to even, lane by lane. WGSL leaves the direction of f32(i32)
// unspecified above 2^24, so v is split into two parts that convert exactly, and the one rounding
// is the (correctly rounded) addition.
fn to_f32_nearest(v: vec4i) -> vec4f {
  let high = vec4f(v >> vec4u(16u)) * 65536.0;
  let low = vec4f(v & vec4i(0xffff));
  return high + low;
}

// Element e's scales, (a_scales[m], w_scales[n]).
fn scales_of(e: u32) -> vec2f {
  let m = e / params.cols;
  return vec2f(a_scales[m], w_scales[e - m * params.cols]);
}

// Output vec4 q.
fn quad(q: u32) -> vec4f {
  let x = to_f32_nearest(acc[q]);
  let e = 4u * q;
  if ((params.cols & 3u) == 0u) {
    let m = e / params.cols;
    let n = e - m * params.cols;
    let w = vec4f(w_scales[n], w_scales[n + 1u], w_scales[n + 2u], w_scales[n + 3u]);
    return (x * a_scales[m]) * w;
  }
  let s0 = scales_of(e);
  let s1 = scales_of(e + 1u);
  let s2 = scales_of(e + 2u);
  let s3 = scales_of(e + 3u);
  return (x * vec4f(s0.x, s1.x, s2.x, s3.x)) * vec4f(s0.y, s1.y, s2.y, s3.y);
}

@compute @workgroup_size(256)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) group: vec3u,
  @builtin(num_workgroups) groups: vec3u,
) {
  let first = group.x + group.y * groups.x;
  let quads = params.n_total / 4u;
// #include "quad_blocks.wgsl"
  let rest = params.n_total % 4u;
  if (rest != 0u && first == 0u && lid == 0u) {
    let x = to_f32_nearest(acc[quads]);
    for (var j = 0u; j < rest; j++) {
      let s = scales_of(4u * quads + j);
      out[quads][j] = (x[j] * s.x) * s.y;
    }
  }
}
