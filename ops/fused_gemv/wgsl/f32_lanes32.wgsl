// fused_gemv/f32_lanes32: out (op)= act(W · in(x)) for an f32 weight [n, k]: 32 invocations across K
// for each group of four rows, four row groups (16 rows a workgroup), four vec4s of each row loaded
// before any is multiplied (past the row: its last vec4 again, with x taken as 0), x read from global
// memory and, with NORM, its squares summed from the same loads; the 32 partial sums of a row group
// added by one invocation as it writes the results. The layout for f32 weights of 6,144 rows or more.
// #include "io.wgsl"
@group(0) @binding(0) var<storage, read> weight: array<vec4f>;
@group(0) @binding(1) var<storage, read> x: array<vec4f>;
@group(0) @binding(2) var<storage, read> g: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: P;


var<workgroup> scratch: array<vec4f, 128>; // the partial sums of four rows
var<workgroup> squares: array<f32, 128>; // the partial sums of x^2

@compute @workgroup_size(32, 4)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  let lane = lid.x;
  let tid = lid.y * 32u + lane;
  let n = p.n;
  let k = p.k;
  let row = ((wid.x + wid.y * nwg.x) * 4u + lid.y) * 4u;
  let r0 = min(row, n - 1u);
  let r1 = min(row + 1u, n - 1u);
  let r2 = min(row + 2u, n - 1u);
  let r3 = min(row + 3u, n - 1u);
  let first = lid.y * 32u;
  var a0 = vec4f(0.0);
  var a1 = vec4f(0.0);
  var a2 = vec4f(0.0);
  var a3 = vec4f(0.0);
  var ss = 0.0;
    let chunks = k / 4u; // weight vec4s per row
    let last = chunks - 1u;
    let b0 = r0 * chunks;
    let b1 = r1 * chunks;
    let b2 = r2 * chunks;
    let b3 = r3 * chunks;
    for (var i = lane; i < chunks; i += 128u) {
      let c0 = i + 0u;
      let l0 = min(c0, last);
      let c1 = i + 32u;
      let l1 = min(c1, last);
      let c2 = i + 64u;
      let l2 = min(c2, last);
      let c3 = i + 96u;
      let l3 = min(c3, last);
      let w00 = weight[b0 + l0];
      let w01 = weight[b1 + l0];
      let w02 = weight[b2 + l0];
      let w03 = weight[b3 + l0];
      let w10 = weight[b0 + l1];
      let w11 = weight[b1 + l1];
      let w12 = weight[b2 + l1];
      let w13 = weight[b3 + l1];
      let w20 = weight[b0 + l2];
      let w21 = weight[b1 + l2];
      let w22 = weight[b2 + l2];
      let w23 = weight[b3 + l2];
      let w30 = weight[b0 + l3];
      let w31 = weight[b1 + l3];
      let w32 = weight[b2 + l3];
      let w33 = weight[b3 + l3];
      var x00 = select(vec4f(0.0), x[1u * l0 + 0u], c0 < chunks);
      if (NORM) {
        ss = fma(x00.x, x00.x, fma(x00.y, x00.y, fma(x00.z, x00.z, fma(x00.w, x00.w, ss))));
        x00 = x00 * g[1u * l0 + 0u];
      }
      a0 = fma(w00, x00, a0);
      a1 = fma(w01, x00, a1);
      a2 = fma(w02, x00, a2);
      a3 = fma(w03, x00, a3);
      var x10 = select(vec4f(0.0), x[1u * l1 + 0u], c1 < chunks);
      if (NORM) {
        ss = fma(x10.x, x10.x, fma(x10.y, x10.y, fma(x10.z, x10.z, fma(x10.w, x10.w, ss))));
        x10 = x10 * g[1u * l1 + 0u];
      }
      a0 = fma(w10, x10, a0);
      a1 = fma(w11, x10, a1);
      a2 = fma(w12, x10, a2);
      a3 = fma(w13, x10, a3);
      var x20 = select(vec4f(0.0), x[1u * l2 + 0u], c2 < chunks);
      if (NORM) {
        ss = fma(x20.x, x20.x, fma(x20.y, x20.y, fma(x20.z, x20.z, fma(x20.w, x20.w, ss))));
        x20 = x20 * g[1u * l2 + 0u];
      }
      a0 = fma(w20, x20, a0);
      a1 = fma(w21, x20, a1);
      a2 = fma(w22, x20, a2);
      a3 = fma(w23, x20, a3);
      var x30 = select(vec4f(0.0), x[1u * l3 + 0u], c3 < chunks);
      if (NORM) {
        ss = fma(x30.x, x30.x, fma(x30.y, x30.y, fma(x30.z, x30.z, fma(x30.w, x30.w, ss))));
        x30 = x30 * g[1u * l3 + 0u];
      }
      a0 = fma(w30, x30, a0);
      a1 = fma(w31, x30, a1);
      a2 = fma(w32, x30, a2);
      a3 = fma(w33, x30, a3);
    }
  scratch[tid] = vec4f((a0.x + a0.y) + (a0.z + a0.w), (a1.x + a1.y) + (a1.z + a1.w), (a2.x + a2.y) + (a2.z + a2.w), (a3.x + a3.y) + (a3.z + a3.w));
  if (NORM) { squares[tid] = ss; }
  workgroupBarrier();
  if (lane == 0u) {
    var y = (((((scratch[first + 0u] + scratch[first + 1u]) + (scratch[first + 2u] + scratch[first + 3u])) + ((scratch[first + 4u] + scratch[first + 5u]) + (scratch[first + 6u] + scratch[first + 7u]))) + (((scratch[first + 8u] + scratch[first + 9u]) + (scratch[first + 10u] + scratch[first + 11u])) + ((scratch[first + 12u] + scratch[first + 13u]) + (scratch[first + 14u] + scratch[first + 15u])))) + ((((scratch[first + 16u] + scratch[first + 17u]) + (scratch[first + 18u] + scratch[first + 19u])) + ((scratch[first + 20u] + scratch[first + 21u]) + (scratch[first + 22u] + scratch[first + 23u]))) + (((scratch[first + 24u] + scratch[first + 25u]) + (scratch[first + 26u] + scratch[first + 27u])) + ((scratch[first + 28u] + scratch[first + 29u]) + (scratch[first + 30u] + scratch[first + 31u])))));
    if (NORM) { y = y * inverseSqrt((((((squares[first + 0u] + squares[first + 1u]) + (squares[first + 2u] + squares[first + 3u])) + ((squares[first + 4u] + squares[first + 5u]) + (squares[first + 6u] + squares[first + 7u]))) + (((squares[first + 8u] + squares[first + 9u]) + (squares[first + 10u] + squares[first + 11u])) + ((squares[first + 12u] + squares[first + 13u]) + (squares[first + 14u] + squares[first + 15u])))) + ((((squares[first + 16u] + squares[first + 17u]) + (squares[first + 18u] + squares[first + 19u])) + ((squares[first + 20u] + squares[first + 21u]) + (squares[first + 22u] + squares[first + 23u]))) + (((squares[first + 24u] + squares[first + 25u]) + (squares[first + 26u] + squares[first + 27u])) + ((squares[first + 28u] + squares[first + 29u]) + (squares[first + 30u] + squares[first + 31u]))))) / f32(k) + p.eps); }
    put(row, y);
  }
}