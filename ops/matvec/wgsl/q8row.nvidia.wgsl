// matvec/q8row.nvidia: y[n] = scale[n] * sum_k code[n, k] * x[k] (W8A32). The weight is [N, ceil(K/4)] u32,
// four two's-complement codes per word, least significant byte first; scale is [N]; x is [K].
// The portable kernel's design with 128 invocations across K and two groups of four rows per
// workgroup instead of 64 and four: half the rows per workgroup (twice the workgroups on a small
// matrix) and each invocation's slice half as long.
//
// Each invocation sums four rows at once (the same columns of each), so that every vec4 of x it
// loads serves four rows of codes: a code is 1 byte and its activation 4, and without that reuse
// the reads of x, not of the weight, would set the pace. A workgroup is 128 invocations across K
// times 2 groups of four rows (8 rows); each invocation sums a strided slice of its rows
// (split-K, neighbouring invocations reading neighbouring vec4s), and the four rows' partial sums
// travel together as a vec4 through a two-round reduction in workgroup memory. Rows past N are read
// as row N - 1 (so that no load needs a guard) and never written.
//
// Codes are decoded without an integer-to-float conversion (which NVIDIA runs at a fraction of the
// FMA rate: the likely limit of a plain decode): each byte is masked in place into the mantissa of a float
// whose exponent makes the mantissa's unit 1, with its sign bit flipped (two's complement to offset
// binary), and the float's bias subtracted, exactly. Bytes 0 and 2 (the latter after a 16-bit
// shift) land at the mantissa's unit, bytes 1 and 3 at 256 times it, so a decoded word is
// (c0, 256 c1, c2, 256 c3); the accumulator keeps that scaling per component and its sum divides
// it out (a power of two: exact) at the end. The row's scale multiplies the finished dot product.
//
// When K % 16 == 0 a row is a whole number of vec4<u32> and each load brings 16 codes; otherwise one
// word at a time, and the last word of a row, whose high bytes are padding, is read with the x
// lanes past K replaced by 0 so that neither the padding codes nor whatever follows x count.
// More than 65,535 workgroups fold into y: group = id.x + id.y * num_workgroups.x.

// #include "q8row_bindings.wgsl"

const LANES = 128u; // invocations across K
const GROUPS = 2u; // groups of four rows per workgroup
const ROWS = 8u; // rows per workgroup: 4 * GROUPS
const SPAN = 16u; // partial sums each of the first round's 8 invocations adds: LANES / 8

// #include "q8row_decode.wgsl"

@compute @workgroup_size(128, 2)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
// #include "q8row_main.wgsl"
}
