// matvec/q8row.nvidia: y[n] = scale[n] * sum_k code[n, k] * x[k] (W8A32). The weight is [N, ceil(K/4)] u32,
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

// #include "q8row_bindings.wgsl"

const LANES = 128u; // invocations across K
const GROUPS = 2u; // groups of four rows per workgroup
const ROWS = 8u; // rows per workgroup: 4 * GROUPS

// #include "q8_magic.wgsl"

var<workgroup> scratch: array<vec4f, LANES * GROUPS>; // the partial sums

@compute @workgroup_size(128, 2)
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
// #include "q8_step.wgsl"
    }
  } else {
// #include "q8_words.wgsl"
  }

  scratch[first + lane] = vec4f((a0.x + a0.y) + (a0.z + a0.w), (a1.x + a1.y) + (a1.z + a1.w),
    (a2.x + a2.y) + (a2.z + a2.w), (a3.x + a3.y) + (a3.z + a3.w));
  workgroupBarrier();
  if (lane < 64u) { scratch[first + lane] += scratch[first + lane + 64u]; }
  workgroupBarrier();
// #include "q_tree.wgsl"
  if (lane < 4u && row + lane < n) {
    y[row + lane] = scale[row + lane] * scratch[first][lane];
  }
}
