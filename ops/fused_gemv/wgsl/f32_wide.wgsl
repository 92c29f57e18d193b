// fused_gemv/f32_wide: out (op)= act(W · in(x)) for an f32 weight [n, k] (see mod.ts: in = x or its
// RMSNorm by NORM, the result stored, added or combined by SwiGLU by OUTPUT). 128 invocations across K
// for each group of four rows, two row groups (8 rows a workgroup), two vec4s of each row in flight,
// the partial sums (and, with NORM, the invocations' sums of squares) reduced by a tree of halvings
// with a barrier each. The engine's layout for f32 weights below 6,144 rows.
// #include "io.wgsl"
@group(0) @binding(0) var<storage, read> weight: array<vec4f>;
@group(0) @binding(1) var<storage, read> x: array<vec4f>;
@group(0) @binding(2) var<storage, read> g: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: P;
// #include "tree_input.wgsl"
var<workgroup> scratch: array<vec4f, 256>;
var<workgroup> squares: array<f32, 256>;

@compute @workgroup_size(128, 2)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  let lane = lid.x;
  let tid = lid.y * 128u + lane;
  let n = p.n;
  let k = p.k;
  let row = ((wid.x + wid.y * nwg.x) * 2u + lid.y) * 4u;
  let r0 = min(row, n - 1u);
  let r1 = min(row + 1u, n - 1u);
  let r2 = min(row + 2u, n - 1u);
  let r3 = min(row + 3u, n - 1u);
  let first = lid.y * 128u;
  var ss = 0.0;
  if (NORM) { ss = sum_squares(tid); }
  let quads = k / 4u;
  let b0 = r0 * quads;
  let b1 = r1 * quads;
  let b2 = r2 * quads;
  let b3 = r3 * quads;
  var a0 = vec4f(0.0);
  var a1 = vec4f(0.0);
  var a2 = vec4f(0.0);
  var a3 = vec4f(0.0);
  for (var i = lane; i < quads; i += 256u) {
    // Quads i and i + 128 of each row; past the row, its last quad again with x taken as 0.
    let j = min(i + 128u, quads - 1u);
    let xa = xin(i);
    let xb = select(vec4f(0.0), xin(j), i + 128u < quads);
    let w0 = weight[b0 + i];
    let w1 = weight[b1 + i];
    let w2 = weight[b2 + i];
    let w3 = weight[b3 + i];
    let v0 = weight[b0 + j];
    let v1 = weight[b1 + j];
    let v2 = weight[b2 + j];
    let v3 = weight[b3 + j];
    a0 = fma(v0, xb, fma(w0, xa, a0));
    a1 = fma(v1, xb, fma(w1, xa, a1));
    a2 = fma(v2, xb, fma(w2, xa, a2));
    a3 = fma(v3, xb, fma(w3, xa, a3));
  }
  scratch[tid] = vec4f(dot(a0, vec4f(1.0)), dot(a1, vec4f(1.0)), dot(a2, vec4f(1.0)), dot(a3, vec4f(1.0)));
  if (NORM) { squares[tid] = ss; }
  workgroupBarrier();
  if (lane < 64u) { scratch[first + lane] += scratch[first + lane + 64u]; if (NORM) { squares[first + lane] += squares[first + lane + 64u]; } }
  workgroupBarrier();
  if (lane < 32u) { scratch[first + lane] += scratch[first + lane + 32u]; if (NORM) { squares[first + lane] += squares[first + lane + 32u]; } }
  workgroupBarrier();
  if (lane < 16u) { scratch[first + lane] += scratch[first + lane + 16u]; if (NORM) { squares[first + lane] += squares[first + lane + 16u]; } }
  workgroupBarrier();
  if (lane < 8u) { scratch[first + lane] += scratch[first + lane + 8u]; if (NORM) { squares[first + lane] += squares[first + lane + 8u]; } }
  workgroupBarrier();
  if (lane < 4u) { scratch[first + lane] += scratch[first + lane + 4u]; if (NORM) { squares[first + lane] += squares[first + lane + 4u]; } }
  workgroupBarrier();
  if (lane < 2u) { scratch[first + lane] += scratch[first + lane + 2u]; if (NORM) { squares[first + lane] += squares[first + lane + 2u]; } }
  workgroupBarrier();
  if (lane < 1u) { scratch[first + lane] += scratch[first + lane + 1u]; if (NORM) { squares[first + lane] += squares[first + lane + 1u]; } }
  workgroupBarrier();
  var f = 1.0;
  if (NORM) { f = inverseSqrt((squares[0u] + squares[128u]) / f32(p.k) + p.eps); }
  if (lane == 0u) { put(row, scratch[first] * f); }
}