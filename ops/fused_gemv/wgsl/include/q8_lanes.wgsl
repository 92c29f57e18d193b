// The q8 lanes layouts' body (q8_lanes32, q8_lanes64, q8_lanes128): the bindings, the workgroup memory
// and `q8_lanes`, which the layout's entry point calls with its builtins. Expects of the including
// kernel io.wgsl (before it), `const LANES`, its workgroup's x size (invocations across K per row
// group: 32, 64 or 128; the y size is 2 row groups), and `const IN_FLIGHT`, the vec4<u32> of each row
// loaded before any is multiplied (2, or 1 with 128 lanes). A row group's LANES partial sums are added
// by one invocation (32 lanes), or first by eight, 8 (64 lanes) or 16 (128) each, a barrier, and then
// by one. The branches on LANES and IN_FLIGHT are on constants: each layout compiles to its own code.
@group(0) @binding(0) var<storage, read> weight: array<vec4u>;
@group(0) @binding(1) var<storage, read> scales: array<f32>;
@group(0) @binding(2) var<storage, read> x: array<vec4f>;
@group(0) @binding(3) var<storage, read> g: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<uniform> p: P;
// #include "q8_decode.wgsl"
var<workgroup> scratch: array<vec4f, 2u * LANES>; // the partial sums of four rows
var<workgroup> squares: array<f32, 2u * LANES>; // the partial sums of x^2

fn q8_lanes(wid: vec3u, nwg: vec3u, lid: vec3u) {
  let lane = lid.x;
  let tid = lid.y * LANES + lane;
  let n = p.n;
  let k = p.k;
  let row = ((wid.x + wid.y * nwg.x) * 2u + lid.y) * 4u;
  let r0 = min(row, n - 1u);
  let r1 = min(row + 1u, n - 1u);
  let r2 = min(row + 2u, n - 1u);
  let r3 = min(row + 3u, n - 1u);
  let first = lid.y * LANES;
  var a0 = vec4f(0.0);
  var a1 = vec4f(0.0);
  var a2 = vec4f(0.0);
  var a3 = vec4f(0.0);
  var ss = 0.0;
  if (k % 16u == 0u) {
    let chunks = k / 16u; // weight vec4s per row
    let last = chunks - 1u;
    let b0 = r0 * chunks;
    let b1 = r1 * chunks;
    let b2 = r2 * chunks;
    let b3 = r3 * chunks;
    for (var i = lane; i < chunks; i += IN_FLIGHT * LANES) {
      let c0 = i + 0u;
      let l0 = min(c0, last);
      let c1 = i + LANES;
      let l1 = min(c1, last);
      let w00 = weight[b0 + l0];
      let w01 = weight[b1 + l0];
      let w02 = weight[b2 + l0];
      let w03 = weight[b3 + l0];
      var w10 = vec4u(0u);
      var w11 = vec4u(0u);
      var w12 = vec4u(0u);
      var w13 = vec4u(0u);
      if (IN_FLIGHT == 2u) {
        w10 = weight[b0 + l1];
        w11 = weight[b1 + l1];
        w12 = weight[b2 + l1];
        w13 = weight[b3 + l1];
      }
      var x00 = select(vec4f(0.0), x[4u * l0 + 0u], c0 < chunks);
      if (NORM) {
        ss = fma(x00.x, x00.x, fma(x00.y, x00.y, fma(x00.z, x00.z, fma(x00.w, x00.w, ss))));
        x00 = x00 * g[4u * l0 + 0u];
      }
      var x01 = select(vec4f(0.0), x[4u * l0 + 1u], c0 < chunks);
      if (NORM) {
        ss = fma(x01.x, x01.x, fma(x01.y, x01.y, fma(x01.z, x01.z, fma(x01.w, x01.w, ss))));
        x01 = x01 * g[4u * l0 + 1u];
      }
      var x02 = select(vec4f(0.0), x[4u * l0 + 2u], c0 < chunks);
      if (NORM) {
        ss = fma(x02.x, x02.x, fma(x02.y, x02.y, fma(x02.z, x02.z, fma(x02.w, x02.w, ss))));
        x02 = x02 * g[4u * l0 + 2u];
      }
      var x03 = select(vec4f(0.0), x[4u * l0 + 3u], c0 < chunks);
      if (NORM) {
        ss = fma(x03.x, x03.x, fma(x03.y, x03.y, fma(x03.z, x03.z, fma(x03.w, x03.w, ss))));
        x03 = x03 * g[4u * l0 + 3u];
      }
      a0 = fma(q8(w00.w), x03, fma(q8(w00.z), x02, fma(q8(w00.y), x01, fma(q8(w00.x), x00, a0))));
      a1 = fma(q8(w01.w), x03, fma(q8(w01.z), x02, fma(q8(w01.y), x01, fma(q8(w01.x), x00, a1))));
      a2 = fma(q8(w02.w), x03, fma(q8(w02.z), x02, fma(q8(w02.y), x01, fma(q8(w02.x), x00, a2))));
      a3 = fma(q8(w03.w), x03, fma(q8(w03.z), x02, fma(q8(w03.y), x01, fma(q8(w03.x), x00, a3))));
      if (IN_FLIGHT == 2u) {
        var x10 = select(vec4f(0.0), x[4u * l1 + 0u], c1 < chunks);
        if (NORM) {
          ss = fma(x10.x, x10.x, fma(x10.y, x10.y, fma(x10.z, x10.z, fma(x10.w, x10.w, ss))));
          x10 = x10 * g[4u * l1 + 0u];
        }
        var x11 = select(vec4f(0.0), x[4u * l1 + 1u], c1 < chunks);
        if (NORM) {
          ss = fma(x11.x, x11.x, fma(x11.y, x11.y, fma(x11.z, x11.z, fma(x11.w, x11.w, ss))));
          x11 = x11 * g[4u * l1 + 1u];
        }
        var x12 = select(vec4f(0.0), x[4u * l1 + 2u], c1 < chunks);
        if (NORM) {
          ss = fma(x12.x, x12.x, fma(x12.y, x12.y, fma(x12.z, x12.z, fma(x12.w, x12.w, ss))));
          x12 = x12 * g[4u * l1 + 2u];
        }
        var x13 = select(vec4f(0.0), x[4u * l1 + 3u], c1 < chunks);
        if (NORM) {
          ss = fma(x13.x, x13.x, fma(x13.y, x13.y, fma(x13.z, x13.z, fma(x13.w, x13.w, ss))));
          x13 = x13 * g[4u * l1 + 3u];
        }
        a0 = fma(q8(w10.w), x13, fma(q8(w10.z), x12, fma(q8(w10.y), x11, fma(q8(w10.x), x10, a0))));
        a1 = fma(q8(w11.w), x13, fma(q8(w11.z), x12, fma(q8(w11.y), x11, fma(q8(w11.x), x10, a1))));
        a2 = fma(q8(w12.w), x13, fma(q8(w12.z), x12, fma(q8(w12.y), x11, fma(q8(w12.x), x10, a2))));
        a3 = fma(q8(w13.w), x13, fma(q8(w13.z), x12, fma(q8(w13.y), x11, fma(q8(w13.x), x10, a3))));
      }
    }
  } else {
    let words = k / 4u; // K % 4 == 0: no padding
    let b0 = r0 * words;
    let b1 = r1 * words;
    let b2 = r2 * words;
    let b3 = r3 * words;
    for (var j = lane; j < words; j += LANES) {
      var xv = x[j];
      if (NORM) {
        ss = fma(xv.x, xv.x, fma(xv.y, xv.y, fma(xv.z, xv.z, fma(xv.w, xv.w, ss))));
        xv = xv * g[j];
      }
      a0 = fma(q8(word(b0 + j)), xv, a0);
      a1 = fma(q8(word(b1 + j)), xv, a1);
      a2 = fma(q8(word(b2 + j)), xv, a2);
      a3 = fma(q8(word(b3 + j)), xv, a3);
    }
  }
  scratch[tid] = vec4f((a0.x + a0.y) + (a0.z + a0.w), (a1.x + a1.y) + (a1.z + a1.w), (a2.x + a2.y) + (a2.z + a2.w), (a3.x + a3.y) + (a3.z + a3.w));
  if (NORM) { squares[tid] = ss; }
  workgroupBarrier();
  if (LANES == 64u) {
    if (lane < 8u) {
      scratch[first + lane] = (((scratch[first + lane + 0u] + scratch[first + lane + 8u]) + (scratch[first + lane + 16u] + scratch[first + lane + 24u])) + ((scratch[first + lane + 32u] + scratch[first + lane + 40u]) + (scratch[first + lane + 48u] + scratch[first + lane + 56u])));
      if (NORM) { squares[first + lane] = (((squares[first + lane + 0u] + squares[first + lane + 8u]) + (squares[first + lane + 16u] + squares[first + lane + 24u])) + ((squares[first + lane + 32u] + squares[first + lane + 40u]) + (squares[first + lane + 48u] + squares[first + lane + 56u]))); }
    }
    workgroupBarrier();
  }
  if (LANES == 128u) {
    if (lane < 8u) {
      scratch[first + lane] = ((((scratch[first + lane + 0u] + scratch[first + lane + 8u]) + (scratch[first + lane + 16u] + scratch[first + lane + 24u])) + ((scratch[first + lane + 32u] + scratch[first + lane + 40u]) + (scratch[first + lane + 48u] + scratch[first + lane + 56u]))) + (((scratch[first + lane + 64u] + scratch[first + lane + 72u]) + (scratch[first + lane + 80u] + scratch[first + lane + 88u])) + ((scratch[first + lane + 96u] + scratch[first + lane + 104u]) + (scratch[first + lane + 112u] + scratch[first + lane + 120u]))));
      if (NORM) { squares[first + lane] = ((((squares[first + lane + 0u] + squares[first + lane + 8u]) + (squares[first + lane + 16u] + squares[first + lane + 24u])) + ((squares[first + lane + 32u] + squares[first + lane + 40u]) + (squares[first + lane + 48u] + squares[first + lane + 56u]))) + (((squares[first + lane + 64u] + squares[first + lane + 72u]) + (squares[first + lane + 80u] + squares[first + lane + 88u])) + ((squares[first + lane + 96u] + squares[first + lane + 104u]) + (squares[first + lane + 112u] + squares[first + lane + 120u])))); }
    }
    workgroupBarrier();
  }
  if (lane == 0u) {
    var y: vec4f;
    if (LANES == 32u) {
      y = (((((scratch[first + 0u] + scratch[first + 1u]) + (scratch[first + 2u] + scratch[first + 3u])) + ((scratch[first + 4u] + scratch[first + 5u]) + (scratch[first + 6u] + scratch[first + 7u]))) + (((scratch[first + 8u] + scratch[first + 9u]) + (scratch[first + 10u] + scratch[first + 11u])) + ((scratch[first + 12u] + scratch[first + 13u]) + (scratch[first + 14u] + scratch[first + 15u])))) + ((((scratch[first + 16u] + scratch[first + 17u]) + (scratch[first + 18u] + scratch[first + 19u])) + ((scratch[first + 20u] + scratch[first + 21u]) + (scratch[first + 22u] + scratch[first + 23u]))) + (((scratch[first + 24u] + scratch[first + 25u]) + (scratch[first + 26u] + scratch[first + 27u])) + ((scratch[first + 28u] + scratch[first + 29u]) + (scratch[first + 30u] + scratch[first + 31u]))))) * vec4f(scales[r0], scales[r1], scales[r2], scales[r3]);
    } else {
      y = (((scratch[first + 0u] + scratch[first + 1u]) + (scratch[first + 2u] + scratch[first + 3u])) + ((scratch[first + 4u] + scratch[first + 5u]) + (scratch[first + 6u] + scratch[first + 7u]))) * vec4f(scales[r0], scales[r1], scales[r2], scales[r3]);
    }
    if (NORM) {
      if (LANES == 32u) {
        y = y * inverseSqrt((((((squares[first + 0u] + squares[first + 1u]) + (squares[first + 2u] + squares[first + 3u])) + ((squares[first + 4u] + squares[first + 5u]) + (squares[first + 6u] + squares[first + 7u]))) + (((squares[first + 8u] + squares[first + 9u]) + (squares[first + 10u] + squares[first + 11u])) + ((squares[first + 12u] + squares[first + 13u]) + (squares[first + 14u] + squares[first + 15u])))) + ((((squares[first + 16u] + squares[first + 17u]) + (squares[first + 18u] + squares[first + 19u])) + ((squares[first + 20u] + squares[first + 21u]) + (squares[first + 22u] + squares[first + 23u]))) + (((squares[first + 24u] + squares[first + 25u]) + (squares[first + 26u] + squares[first + 27u])) + ((squares[first + 28u] + squares[first + 29u]) + (squares[first + 30u] + squares[first + 31u]))))) / f32(k) + p.eps);
      } else {
        y = y * inverseSqrt((((squares[first + 0u] + squares[first + 1u]) + (squares[first + 2u] + squares[first + 3u])) + ((squares[first + 4u] + squares[first + 5u]) + (squares[first + 6u] + squares[first + 7u]))) / f32(k) + p.eps);
      }
    }
    put(row, y);
  }
}
