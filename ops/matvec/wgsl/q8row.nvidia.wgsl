// matvec/q8row.nvidia: y[n] = scales[n] * sum_k code[n, k] * x[k] (W8A32). The weight is [N, ceil(K/4)] u32,
// four two's-complement codes per word, least significant byte first; scale is [N]; x is [K].
//
// Each invocation sums four rows at once over the same columns, so that every vec4 of x it loads
// serves four rows of codes: a code is 1 byte and its activation 4, and without that reuse the reads
// of x, not of the weight, would set the pace. A workgroup is 128 invocations across K times 2 groups
// of four rows (8 rows). Each invocation sums a strided slice of its rows (split-K, neighbouring
// invocations reading neighbouring vec4s), one vec4<u32> of 16 codes of each of its four rows in
// flight per iteration, into four vec4 accumulators local to main. Every decode and FMA is written
// out in main (no helper functions, no module-scope variables), and each row group's 128 partial
// sums (vec4s: four rows each) are reduced by a tree in workgroup memory: seven halvings, each with
// all of its additions at once.
//
// This replaced the portable kernel's design at the same 128 x 2 layout and loads (accumulators in
// module-scope private variables updated by helper functions, and a reduction in which 8 invocations
// add 16 sums each, then one adds those 8), which was slower on all five bench shapes: measured on
// the H200, 2026-11-30, GPU timestamps, warm clocks, 27.5-47.4% of the bandwidth roofline against
// 30.2-52.5% for this kernel (4096 x 4096: 1242 -> 1364 GB/s; 4096 x 14336: 2143 -> 2371; the
// figures per shape are in mod.ts). Which of the three differences matters most was not measured
// apart.
//
// Codes are decoded without an integer-to-float conversion (which NVIDIA runs at a fraction of the
// FMA rate): each byte is masked in place into the mantissa of a float, with its sign bit flipped
// (two's complement to offset binary), and the float's bias subtracted, exactly. Bytes 0 and 2 (the
// latter after a 16-bit shift) sit at bits 0-7 of a float of exponent 2^23, bytes 1 and 3 at bits
// 8-15 of one of exponent 2^15; either way the byte's lowest bit is worth 1, so a decoded word is its
// four codes themselves. The row's scale multiplies the finished dot product.
//
// When K % 16 == 0 a row is a whole number of vec4<u32> and each load brings 16 codes; otherwise one
// word at a time, and the last word of a row, whose high bytes are padding, is read with the x
// lanes past K replaced by 0 so that neither the padding codes nor whatever follows x count.

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

const LANES = 128u; // invocations across K
const GROUPS = 2u; // groups of four rows per workgroup
const ROWS = 8u; // rows per workgroup: 4 * GROUPS

// #include "q8_magic.wgsl"

// #include "q_term_sums.wgsl"

var<workgroup> scratch: array<vec4f, LANES * GROUPS>; // the partial sums

@compute @workgroup_size(128, 2)
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
    let b0 = r0 * chunks;
    let b1 = r1 * chunks;
    let b2 = r2 * chunks;
    let b3 = r3 * chunks;
    for (var i = lane; i < chunks; i += LANES) {
      let q0 = weight[b0 + i];
      let q1 = weight[b1 + i];
      let q2 = weight[b2 + i];
      let q3 = weight[b3 + i];
      let x0 = x[4u * i];
      let x1 = x[4u * i + 1u];
      let x2 = x[4u * i + 2u];
      let x3 = x[4u * i + 3u];
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

  scratch[first + lane] = vec4f((a0.x + a0.y) + (a0.z + a0.w), (a1.x + a1.y) + (a1.z + a1.w),
    (a2.x + a2.y) + (a2.z + a2.w), (a3.x + a3.y) + (a3.z + a3.w));
  workgroupBarrier();
  if (lane < 64u) { scratch[first + lane] += scratch[first + lane + 64u]; }
  workgroupBarrier();
// The end of the NVIDIA quantized kernels' tree reduction. Each row group's partial sums (a vec4
// each: its four rows) are in scratch[first + lane] for lanes below 64 (a kernel of 128 lanes has
// added its upper half), past a barrier; six halvings in place, every addition of a halving at once
// and a barrier after each, leave the four rows' dot products in scratch[first].
  if (lane < 32u) { scratch[first + lane] += scratch[first + lane + 32u]; }
  workgroupBarrier();
  if (lane < 16u) { scratch[first + lane] += scratch[first + lane + 16u]; }
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
