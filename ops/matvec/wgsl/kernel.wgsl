// matvec/kernel: y[n] = sum_k weight[n, k] * x[k]; weight is [N, K] f32 row-major, x is [K]
// (torch.mv).
// Streaming, not tiled: every weight is read once and nothing is reused but x.
// 4 rows per workgroup, 64 invocations per row. Each invocation sums a strided slice of its row
// (split-K: neighbouring invocations read neighbouring vec4s), 4 vec4s of the slice per loop
// iteration into 4 accumulators, so that 4 loads (64 bytes of the weight) are in flight per
// invocation rather than one (a GEMV is bound by the bytes in flight, and a driver cannot be relied
// on to unroll a WGSL loop). The last iteration's extra terms are masked. The row's 64 partial
// sums are then reduced in workgroup memory in two rounds (8 invocations add 8 each, then one adds
// the 8). When K % 4 == 0 every row starts on a 16-byte boundary and is read as vec4s; otherwise
// element by element, as components of the same vec4 bindings.
// More than 65,535 workgroups fold into y: group = id.x + id.y * num_workgroups.x, rows bound-checked.

// The params and bindings of matvec/kernel (both variants).
struct Params {
  n: u32, // rows of weight, length of y
  k: u32, // columns of weight, length of x
}

@group(0) @binding(0) var<storage, read> weight: array<vec4f>;
@group(0) @binding(1) var<storage, read> x: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const LANES = 64u; // invocations per row
const ROWS = 4u; // rows per workgroup
const SPAN = 8u; // partial sums each of the first round's 8 invocations adds: LANES / 8

// #include "kernel_quad.wgsl"

@compute @workgroup_size(64, 4)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
// This invocation's row and lane, and its four accumulators.
  let row = (wid.x + wid.y * groups.x) * ROWS + lid.y;
  let lane = lid.x;
  let k = params.k;
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
  if (row < params.n) {
    if (k % 4u == 0u) {
      let quads = k / 4u;
      let base = row * quads;
      for (var i = lane; i < quads; i += 4u * LANES) {
        acc0 = fma(weight[base + i], x[i], acc0);
        acc1 = quad(acc1, base, i + 1u * LANES, quads);
        acc2 = quad(acc2, base, i + 2u * LANES, quads);
        acc3 = quad(acc3, base, i + 3u * LANES, quads);
      }
    } else {
      let base = row * k;
      for (var c = lane; c < k; c += LANES) {
        let e = base + c;
        acc0.x = fma(weight[e / 4u][e % 4u], x[c / 4u][c % 4u], acc0.x);
      }
    }
  }

// The two-round reduction of the row's LANES partial sums in workgroup memory (8 invocations add
// SPAN each, then one adds the 8) and the store of y[row].
  let first = lid.y * LANES;
  partial[first + lane] = dot(acc0 + acc1 + acc2 + acc3, vec4f(1.0));
  workgroupBarrier();
  if (lane < 8u) {
    var s = 0.0;
    for (var j = 0u; j < SPAN; j++) {
      s += partial[first + lane * SPAN + j];
    }
    partial[first + lane * SPAN] = s;
  }
  workgroupBarrier();
  if (lane == 0u && row < params.n) {
    var s = 0.0;
    for (var j = 0u; j < 8u; j++) {
      s += partial[first + j * SPAN];
    }
    y[row] = s;
  }
}
