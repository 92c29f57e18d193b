// matvec/q8row_rows64: y[n] = scales[n] * sum_k code[n, k] * x[k] (W8A32), for weights with many rows
// (an output head). The format and the decode are q8row.nvidia's: the weight is [N, ceil(K/4)] u32,
// four two's-complement codes per word, least significant byte first; scale is [N]; x is [K].
//
// Each invocation sums four rows at once over the same columns (every vec4 of x it loads serves four
// rows), but only 16 invocations share a row where q8row.nvidia has 128: a workgroup is 16
// invocations across K times 16 groups of four rows, 64 rows. Neighbouring invocations still read
// neighbouring vec4<u32> of a row (16 x 16 bytes: whole 256-byte spans), each invocation walks 16
// times as many steps of K, and a row group's partial sums take four halvings, not seven. The loop
// is software-pipelined: the next step's four vec4<u32> and four vec4s of x are loaded (the index
// clamped into the row, so the loads past the last step re-read it) before this step is decoded, so
// the loads are in flight during the decode.
//
// Why: at 102400 x 1792, q8row.nvidia runs 12,800 workgroups whose loop is one step long, and
// their fixed cost sets the pace: with its loop emptied it still took 24.7 us of its 77.7 (H200,
// 2026-11-30, GPU timestamps, warm clocks; harness/baselines/nvidia-h200-log/10-q8b.txt, 12-q8c.txt).
// This kernel ran that shape in 58.7 us (68.4% of the bandwidth roofline against 51.7%), but with
// fewer workgroups it loses where N is small: 8192 x 8192 41.0% against 50.7%, 4096 x 4096 19.9%
// against 29.5%, and 14336 x 4096 (224 workgroups) 48.6% against 48.7%. The plan therefore takes it
// only for weights of at least QUANTIZED_TALL_MIN_ROWS rows (ops/matvec/mod.ts).
//
// When K % 16 == 0 a row is a whole number of vec4<u32>; otherwise the word path of q8row.nvidia.

// The params and bindings of matvec/q8row (both variants).
// The params of the quantized kernels (q8row, q4g128).
struct Params {
  n: u32, // rows, length of y
  k: u32, // columns, length of x
}

@group(0) @binding(0) var<storage, read> weight: array<vec4u>;
@group(0) @binding(1) var<storage, read> scales: array<f32>;
@group(0) @binding(2) var<storage, read> x: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

const LANES = 16u; // invocations across K
const GROUPS = 16u; // groups of four rows per workgroup
const ROWS = 64u; // rows per workgroup: 4 * GROUPS

// #include "q8_magic.wgsl"

// #include "q_term_sums.wgsl"

var<workgroup> scratch: array<vec4f, LANES * GROUPS>; // the partial sums

@compute @workgroup_size(16, 16)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
// The start of the NVIDIA quantized kernels' main: this invocation's lane across K and its four rows,
// r0..r3, clamped to N - 1 (rows past N are read as row N - 1, so that no load needs a guard, and
// never written). More than 65,535 workgroups fold into y: group = id.x + id.y * num_workgroups.x.
  let lane = lid.x;
  let n = params.n;
  let k = params.k;
  let row = ((wid.x + wid.y * groups.x) * GROUPS + lid.y) * 4u; // this invocation's first row
  let r0 = min(row, n - 1u);
  let r1 = min(row + 1u, n - 1u);
  let r2 = min(row + 2u, n - 1u);
  let r3 = min(row + 3u, n - 1u);
  let first = lid.y * LANES; // this row group's partial sums in scratch
  var a0 = vec4f(0.0); // row r0's products, column j % 4 in component j % 4
  var a1 = vec4f(0.0);
  var a2 = vec4f(0.0);
  var a3 = vec4f(0.0);
  if (k % 16u == 0u) {
    let chunks = k / 16u; // vec4<u32> per row
    let last = chunks - 1u;
    let b0 = r0 * chunks;
    let b1 = r1 * chunks;
    let b2 = r2 * chunks;
    let b3 = r3 * chunks;
    // This step's codes and activations, loaded one step ahead.
    let c = min(lane, last);
    var q0 = weight[b0 + c];
    var q1 = weight[b1 + c];
    var q2 = weight[b2 + c];
    var q3 = weight[b3 + c];
    var x0 = x[4u * c];
    var x1 = x[4u * c + 1u];
    var x2 = x[4u * c + 2u];
    var x3 = x[4u * c + 3u];
    for (var i = lane; i < chunks; i += LANES) {
      let next = min(i + LANES, last);
      let p0 = weight[b0 + next];
      let p1 = weight[b1 + next];
      let p2 = weight[b2 + next];
      let p3 = weight[b3 + next];
      let v0 = x[4u * next];
      let v1 = x[4u * next + 1u];
      let v2 = x[4u * next + 2u];
      let v3 = x[4u * next + 3u];
// One step of the NVIDIA-layout int8 kernels' vec4 path (q8row.nvidia, q8row_rows64): the 16 codes
// of each of four rows (q0..q3, vec4<u32>) decoded (q8_magic.wgsl) and multiplied by the four vec4s
// of x they share (x0..x3), into a0..a3.
      a0 = fma((bitcast<vec4f>((vec4u(q0.x, q0.x, q0.x >> 16u, q0.x >> 16u) & MASK) ^ MAGIC) - BIAS), x0, a0);
      a0 = fma((bitcast<vec4f>((vec4u(q0.y, q0.y, q0.y >> 16u, q0.y >> 16u) & MASK) ^ MAGIC) - BIAS), x1, a0);
      a0 = fma((bitcast<vec4f>((vec4u(q0.z, q0.z, q0.z >> 16u, q0.z >> 16u) & MASK) ^ MAGIC) - BIAS), x2, a0);
      a0 = fma((bitcast<vec4f>((vec4u(q0.w, q0.w, q0.w >> 16u, q0.w >> 16u) & MASK) ^ MAGIC) - BIAS), x3, a0);
      a1 = fma((bitcast<vec4f>((vec4u(q1.x, q1.x, q1.x >> 16u, q1.x >> 16u) & MASK) ^ MAGIC) - BIAS), x0, a1);
      a1 = fma((bitcast<vec4f>((vec4u(q1.y, q1.y, q1.y >> 16u, q1.y >> 16u) & MASK) ^ MAGIC) - BIAS), x1, a1);
      a1 = fma((bitcast<vec4f>((vec4u(q1.z, q1.z, q1.z >> 16u, q1.z >> 16u) & MASK) ^ MAGIC) - BIAS), x2, a1);
      a1 = fma((bitcast<vec4f>((vec4u(q1.w, q1.w, q1.w >> 16u, q1.w >> 16u) & MASK) ^ MAGIC) - BIAS), x3, a1);
      a2 = fma((bitcast<vec4f>((vec4u(q2.x, q2.x, q2.x >> 16u, q2.x >> 16u) & MASK) ^ MAGIC) - BIAS), x0, a2);
      a2 = fma((bitcast<vec4f>((vec4u(q2.y, q2.y, q2.y >> 16u, q2.y >> 16u) & MASK) ^ MAGIC) - BIAS), x1, a2);
      a2 = fma((bitcast<vec4f>((vec4u(q2.z, q2.z, q2.z >> 16u, q2.z >> 16u) & MASK) ^ MAGIC) - BIAS), x2, a2);
      a2 = fma((bitcast<vec4f>((vec4u(q2.w, q2.w, q2.w >> 16u, q2.w >> 16u) & MASK) ^ MAGIC) - BIAS), x3, a2);
      a3 = fma((bitcast<vec4f>((vec4u(q3.x, q3.x, q3.x >> 16u, q3.x >> 16u) & MASK) ^ MAGIC) - BIAS), x0, a3);
      a3 = fma((bitcast<vec4f>((vec4u(q3.y, q3.y, q3.y >> 16u, q3.y >> 16u) & MASK) ^ MAGIC) - BIAS), x1, a3);
      a3 = fma((bitcast<vec4f>((vec4u(q3.z, q3.z, q3.z >> 16u, q3.z >> 16u) & MASK) ^ MAGIC) - BIAS), x2, a3);
      a3 = fma((bitcast<vec4f>((vec4u(q3.w, q3.w, q3.w >> 16u, q3.w >> 16u) & MASK) ^ MAGIC) - BIAS), x3, a3);
      q0 = p0;
      q1 = p1;
      q2 = p2;
      q3 = p3;
      x0 = v0;
      x1 = v1;
      x2 = v2;
      x3 = v3;
    }
  } else {
// The word path of the NVIDIA-layout int8 kernels (q8row.nvidia, q8row_rows64), for K % 16 != 0:
// one word of each of four rows (r0..r3, LANES invocations across K) at a time into a0..a3, and the
// last word of a row, whose high bytes are padding, read with the x lanes past K replaced by 0 so
// that neither the padding codes nor whatever follows x count. Needs MASK, MAGIC and BIAS.
    let words = (k + 3u) / 4u; // words per row
    let full = k / 4u; // words with no padding
    let b0 = r0 * words;
    let b1 = r1 * words;
    let b2 = r2 * words;
    let b3 = r3 * words;
    for (var j = lane; j < full; j += LANES) {
      let w0 = weight[(b0 + j) / 4u][(b0 + j) % 4u];
      let w1 = weight[(b1 + j) / 4u][(b1 + j) % 4u];
      let w2 = weight[(b2 + j) / 4u][(b2 + j) % 4u];
      let w3 = weight[(b3 + j) / 4u][(b3 + j) % 4u];
      let xv = x[j];
      a0 = fma((bitcast<vec4f>((vec4u(w0, w0, w0 >> 16u, w0 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a0);
      a1 = fma((bitcast<vec4f>((vec4u(w1, w1, w1 >> 16u, w1 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a1);
      a2 = fma((bitcast<vec4f>((vec4u(w2, w2, w2 >> 16u, w2 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a2);
      a3 = fma((bitcast<vec4f>((vec4u(w3, w3, w3 >> 16u, w3 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a3);
    }
    if (full < words && lane == full % LANES) {
      let w0 = weight[(b0 + full) / 4u][(b0 + full) % 4u];
      let w1 = weight[(b1 + full) / 4u][(b1 + full) % 4u];
      let w2 = weight[(b2 + full) / 4u][(b2 + full) % 4u];
      let w3 = weight[(b3 + full) / 4u][(b3 + full) % 4u];
      let xv = select(vec4f(0.0), x[full], vec4u(0u, 1u, 2u, 3u) < vec4u(k % 4u));
      a0 = fma((bitcast<vec4f>((vec4u(w0, w0, w0 >> 16u, w0 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a0);
      a1 = fma((bitcast<vec4f>((vec4u(w1, w1, w1 >> 16u, w1 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a1);
      a2 = fma((bitcast<vec4f>((vec4u(w2, w2, w2 >> 16u, w2 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a2);
      a3 = fma((bitcast<vec4f>((vec4u(w3, w3, w3 >> 16u, w3 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a3);
    }
  }

  // Each row group's 16 partial sums (vec4s: four rows each), then the tree.
  scratch[first + lane] = vec4f((a0.x + a0.y) + (a0.z + a0.w), (a1.x + a1.y) + (a1.z + a1.w),
    (a2.x + a2.y) + (a2.z + a2.w), (a3.x + a3.y) + (a3.z + a3.w));
  workgroupBarrier();
// The last four halvings of the tree reduction (all of it in q8row_rows64): each row group's partial sums (a vec4 each: its four rows) in scratch[first + lane]
// for lanes below 16, past a barrier, halved in place, every addition of a halving at once and a
// barrier after each, leave the four rows' dot products in scratch[first].
  if (lane < 8u) { scratch[first + lane] += scratch[first + lane + 8u]; }
  workgroupBarrier();
  if (lane < 4u) { scratch[first + lane] += scratch[first + lane + 4u]; }
  workgroupBarrier();
  if (lane < 2u) { scratch[first + lane] += scratch[first + lane + 2u]; }
  workgroupBarrier();
  if (lane == 0u) { scratch[first] += scratch[first + 1u]; }
  workgroupBarrier();
  if (lane < 4u && row + lane < n) {
    y[row + lane] = q8_row_result(row + lane, scales[row + lane] * scratch[first][lane]);
  }
}
