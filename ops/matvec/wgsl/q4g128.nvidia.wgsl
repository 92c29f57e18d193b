// matvec/q4g128.nvidia: y[n] = sum_g scales[n, g] * sum_{k in group g} code[n, k] * x[k] (W4A32, group 128).
// The weight is [N, ceil(K/8)] u32, eight two's-complement codes per word, least significant nibble
// first; scales is [N, ceil(K/128)]; x is [K].
// The portable kernel's design with 128 invocations across K and two groups of four rows per
// workgroup instead of 64 and four: half the rows per workgroup (twice the workgroups on a small
// matrix) and each invocation's slice half as long.
//
// Each invocation sums four rows at once (the same columns of each), so that every vec4 of x it
// loads serves four rows of codes: a code is half a byte and its activation 4, and without that
// reuse the reads of x, not of the weight, would set the pace. A workgroup is 128 invocations across
// K times 2 groups of four rows (8 rows); each invocation sums a strided slice of its rows
// (split-K, neighbouring invocations reading neighbouring vec4s), and the four rows' partial sums
// travel together as a vec4 through a two-round reduction in workgroup memory. Rows past N are read
// as row N - 1 (so that no load needs a guard) and never written.
//
// Codes are decoded without an integer-to-float conversion (which NVIDIA runs at a fraction of the
// FMA rate: the likely limit of a plain decode): each nibble is masked in place into the mantissa of a
// float whose exponent makes the mantissa's unit 1, with its sign bit flipped (two's complement to
// offset binary), and the float's bias subtracted, exactly. Nibbles 0-3 (and 4-7 after a 16-bit
// shift) land at 1, 16, 256 and 4096 times the unit, so half a word decodes to
// (c0, 16 c1, 256 c2, 4096 c3); a word's (or a vec4 of words') products are summed in that scaling,
// which the sum divides out (powers of two: exact), and the result is multiplied by its group's
// scale: a word never straddles two groups (8 divides 128), so the scale multiplies the partial dot
// product of a word or of a vec4 of words, never a single term.
//
// When K % 32 == 0 a row is a whole number of vec4<u32> and each load brings 32 codes; otherwise
// one word at a time, and the last word of a row, whose high nibbles are padding, is read with the
// x lanes past K replaced by 0 (and x past its end not read) so that the padding never counts.
// More than 65,535 workgroups fold into y: group = id.x + id.y * num_workgroups.x.

// #include "q4g128_bindings.wgsl"

const LANES = 128u; // invocations across K
const GROUPS = 2u; // groups of four rows per workgroup
const ROWS = 8u; // rows per workgroup: 4 * GROUPS
const SPAN = 16u; // partial sums each of the first round's 8 invocations adds: LANES / 8
const GROUP = 128u; // columns per scale

// #include "q4g128_decode.wgsl"

@compute @workgroup_size(128, 2)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
// #include "q4g128_main.wgsl"
}
