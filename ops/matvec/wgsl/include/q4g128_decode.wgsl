// q4g128's decode and dot products (both variants): codes without an int-to-float conversion.
//
// Nibble j of a half word lands at bits 4j .. 4j + 3 of a float with exponent 2^23.
const MASK = vec4u(0xfu, 0xf0u, 0xf00u, 0xf000u);
const MAGIC = vec4u(0x4b000008u, 0x4b000080u, 0x4b000800u, 0x4b008000u); // 2^23, sign bits flipped
const BIAS = vec4f(8388616.0, 8388736.0, 8390656.0, 8421376.0); // 2^23 + 8 * 16^j
const UNSCALE = vec4f(1.0, 0.0625, 0.00390625, 0.000244140625); // 16^-j

var<workgroup> partial: array<vec4f, LANES * GROUPS>;

// Codes 0-3 and 4-7 of a word as (c, 16 c, 256 c, 4096 c), exactly.
fn low_codes(word: u32) -> vec4f {
  return bitcast<vec4f>((vec4u(word) & MASK) ^ MAGIC) - BIAS;
}

fn high_codes(word: u32) -> vec4f {
  return bitcast<vec4f>((vec4u(word >> 16u) & MASK) ^ MAGIC) - BIAS;
}

// #include "q_words_at.wgsl"

// The scales of column k of four rows (ngroups = ceil(K/128) per row).
fn scales_at(rows: vec4u, ngroups: u32, k: u32) -> vec4f {
  let e = rows * ngroups + k / GROUP;
  return vec4f(scales[e.x], scales[e.y], scales[e.z], scales[e.w]);
}

// The activations of the current 32 columns, x0..x7 (a vec4<u32> of codes at a time).
var<private> x0: vec4f;
var<private> x1: vec4f;
var<private> x2: vec4f;
var<private> x3: vec4f;
var<private> x4: vec4f;
var<private> x5: vec4f;
var<private> x6: vec4f;
var<private> x7: vec4f;

// sum of code * x over 32 columns: q holds them, x0..x7 their activations.
fn chunk_dot(q: vec4u) -> f32 {
  var v = fma(low_codes(q.x), x0, high_codes(q.x) * x1);
  v = fma(low_codes(q.y), x2, fma(high_codes(q.y), x3, v));
  v = fma(low_codes(q.z), x4, fma(high_codes(q.z), x5, v));
  v = fma(low_codes(q.w), x6, fma(high_codes(q.w), x7, v));
  return dot(v, UNSCALE);
}

// sum of code * x over the 8 columns of a word, for each of four rows; lo and hi are the activations.
fn words_dot(w: vec4u, lo: vec4f, hi: vec4f) -> vec4f {
  return vec4f(
    dot(fma(low_codes(w.x), lo, high_codes(w.x) * hi), UNSCALE),
    dot(fma(low_codes(w.y), lo, high_codes(w.y) * hi), UNSCALE),
    dot(fma(low_codes(w.z), lo, high_codes(w.z) * hi), UNSCALE),
    dot(fma(low_codes(w.w), lo, high_codes(w.w) * hi), UNSCALE),
  );
}
