// matvec/q4g128: y[n] = sum_g scales[n, g] * sum_{k in group g} code[n, k] * x[k] (W4A32, group 128).
// The weight is [N, ceil(K/8)] u32, eight two's-complement codes per word, least significant nibble
// first; scales is [N, ceil(K/128)]; x is [K].
//
// Each invocation sums four rows at once (the same columns of each), so that every vec4 of x it
// loads serves four rows of codes: a code is half a byte and its activation 4, and without that
// reuse the reads of x, not of the weight, would set the pace. A workgroup is 64 invocations across
// K times 4 groups of four rows (16 rows); each invocation sums a strided slice of its rows
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

// The params and bindings of matvec/q4g128 (both variants).
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

const LANES = 64u; // invocations across K
const GROUPS = 4u; // groups of four rows per workgroup
const ROWS = 16u; // rows per workgroup: 4 * GROUPS
const SPAN = 8u; // partial sums each of the first round's 8 invocations adds: LANES / 8
const GROUP = 128u; // columns per scale

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

// #include "q_term_sums.wgsl"

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

@compute @workgroup_size(64, 4)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
  let row = (wid.x + wid.y * groups.x) * ROWS + 4u * lid.y; // the first of this invocation's rows
  let lane = lid.x;
  let k = params.k;
  let rows = min(vec4u(row) + vec4u(0u, 1u, 2u, 3u), vec4u(params.n - 1u));
  let ngroups = (k + GROUP - 1u) / GROUP;
  var acc = vec4f(0.0); // the four rows
  if (k % 32u == 0u) {
    let chunks = k / 32u;
    for (var i = lane; i < chunks; i += LANES) {
      let q = rows * chunks + i;
      let q0 = weight[q.x];
      let q1 = weight[q.y];
      let q2 = weight[q.z];
      let q3 = weight[q.w];
      let s = scales_at(rows, ngroups, 32u * i);
      x0 = x[8u * i];
      x1 = x[8u * i + 1u];
      x2 = x[8u * i + 2u];
      x3 = x[8u * i + 3u];
      x4 = x[8u * i + 4u];
      x5 = x[8u * i + 5u];
      x6 = x[8u * i + 6u];
      x7 = x[8u * i + 7u];
      acc = fma(s, vec4f(chunk_dot(q0), chunk_dot(q1), chunk_dot(q2), chunk_dot(q3)), acc);
    }
  } else {
    let words = (k + 7u) / 8u;
    let full = k / 8u;
    for (var j = lane; j < full; j += LANES) {
      let d = words_dot(words_at(rows, words, j), x[2u * j], x[2u * j + 1u]);
      acc = fma(scales_at(rows, ngroups, 8u * j), d, acc);
    }
    if (full < words && lane == full % LANES) {
      let left = k % 8u; // columns of the last word inside the row
      let lanes = vec4u(0u, 1u, 2u, 3u);
      let lo = select(vec4f(0.0), x[2u * full], lanes < vec4u(left));
      var hi = vec4f(0.0);
      if (left > 4u) {
        hi = select(vec4f(0.0), x[2u * full + 1u], lanes + 4u < vec4u(left));
      }
      let d = words_dot(words_at(rows, words, full), lo, hi);
      acc = fma(scales_at(rows, ngroups, 8u * full), d, acc);
    }
  }

  let first = lid.y * LANES;
  partial[first + lane] = acc;
// The two-round reduction of the workgroup's partial sums (each a vec4: four rows): 8 invocations
// add SPAN each, in place; the caller's invocation 0 then adds the 8.
  workgroupBarrier();
  if (lane < 8u) {
    var s = vec4f(0.0);
    for (var j = 0u; j < SPAN; j++) {
      s += partial[first + lane * SPAN + j];
    }
    partial[first + lane * SPAN] = s;
  }
  workgroupBarrier();
  if (lane == 0u) {
    var s = vec4f(0.0);
    for (var j = 0u; j < 8u; j++) {
      s += partial[first + j * SPAN];
    }
    for (var r = 0u; r < 4u; r++) {
      if (row + r < params.n) {
        y[row + r] = q4_row_result(row + r, s[r]);
      }
    }
  }
}
