// matvec/q8row_rows64: y[n] = scale[n] * sum_k code[n, k] * x[k] (W8A32), for weights with many rows
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

// #include "q8row_bindings.wgsl"

const LANES = 16u; // invocations across K
const GROUPS = 16u; // groups of four rows per workgroup
const ROWS = 64u; // rows per workgroup: 4 * GROUPS

// #include "q8_magic.wgsl"

var<workgroup> scratch: array<vec4f, LANES * GROUPS>; // the partial sums

@compute @workgroup_size(16, 16)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
// #include "q_rows.wgsl"
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
// #include "q8_step.wgsl"
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
// #include "q8_words.wgsl"
  }

  // Each row group's 16 partial sums (vec4s: four rows each), then the tree.
  scratch[first + lane] = vec4f((a0.x + a0.y) + (a0.z + a0.w), (a1.x + a1.y) + (a1.z + a1.w),
    (a2.x + a2.y) + (a2.z + a2.w), (a3.x + a3.y) + (a3.z + a3.w));
  workgroupBarrier();
// #include "q_tree16.wgsl"
  if (lane < 4u && row + lane < n) {
    y[row + lane] = scale[row + lane] * scratch[first][lane];
  }
}
