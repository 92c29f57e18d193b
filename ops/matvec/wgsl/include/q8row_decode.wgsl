// q8row's decode and accumulation (both variants): codes without an int-to-float conversion.
//
// Byte j of a word lands at bits 8 (j % 2) .. 8 (j % 2) + 7 of a float with exponent 2^23.
const MASK = vec4u(0xffu, 0xff00u, 0xffu, 0xff00u);
const MAGIC = vec4u(0x4b000080u, 0x4b008000u, 0x4b000080u, 0x4b008000u); // 2^23, sign bits flipped
const BIAS = vec4f(8388736.0, 8421376.0, 8388736.0, 8421376.0); // 2^23 + 128, 2^23 + 128 * 256
const UNSCALE = vec4f(1.0, 0.00390625, 1.0, 0.00390625); // 1, 1/256, 1, 1/256

var<workgroup> partial: array<vec4f, LANES * GROUPS>;

// The four codes of a word as (c0, 256 c1, c2, 256 c3), exactly.
fn codes(word: u32) -> vec4f {
  let high = word >> 16u;
  return bitcast<vec4f>((vec4u(word, word, high, high) & MASK) ^ MAGIC) - BIAS;
}

// #include "q_words_at.wgsl"

// The accumulators of the four rows, in codes(word) scaling. Module-scope private variables start at zero.
var<private> acc0: vec4f;
var<private> acc1: vec4f;
var<private> acc2: vec4f;
var<private> acc3: vec4f;

// Sixteen columns of the four rows: q0..q3 hold them (four words each), x0..x3 their activations.
fn chunk(q0: vec4u, q1: vec4u, q2: vec4u, q3: vec4u, x0: vec4f, x1: vec4f, x2: vec4f, x3: vec4f) {
  acc0 = fma(codes(q0.x), x0, fma(codes(q0.y), x1, fma(codes(q0.z), x2, fma(codes(q0.w), x3, acc0))));
  acc1 = fma(codes(q1.x), x0, fma(codes(q1.y), x1, fma(codes(q1.z), x2, fma(codes(q1.w), x3, acc1))));
  acc2 = fma(codes(q2.x), x0, fma(codes(q2.y), x1, fma(codes(q2.z), x2, fma(codes(q2.w), x3, acc2))));
  acc3 = fma(codes(q3.x), x0, fma(codes(q3.y), x1, fma(codes(q3.z), x2, fma(codes(q3.w), x3, acc3))));
}

// Four columns of the four rows: one word of each, and their activations.
fn word4(w: vec4u, xv: vec4f) {
  acc0 = fma(codes(w.x), xv, acc0);
  acc1 = fma(codes(w.y), xv, acc1);
  acc2 = fma(codes(w.z), xv, acc2);
  acc3 = fma(codes(w.w), xv, acc3);
}

// The four rows' dot products so far.
fn sums() -> vec4f {
  return vec4f(dot(acc0, UNSCALE), dot(acc1, UNSCALE), dot(acc2, UNSCALE), dot(acc3, UNSCALE));
}
