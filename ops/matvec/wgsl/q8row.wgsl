// matvec/q8row: y[n] = scales[n] * sum_k code[n, k] * x[k] (W8A32). The weight is [N, ceil(K/4)] u32,
// four two's-complement codes per word, least significant byte first; scale is [N]; x is [K].
//
// Each invocation sums four rows at once (the same columns of each), so that every vec4 of x it
// loads serves four rows of codes: a code is 1 byte and its activation 4, and without that reuse
// the reads of x, not of the weight, would set the pace. A workgroup is 64 invocations across K
// times 4 groups of four rows (16 rows); each invocation sums a strided slice of its rows
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

const LANES = 64u; // invocations across K
const GROUPS = 4u; // groups of four rows per workgroup
const ROWS = 16u; // rows per workgroup: 4 * GROUPS
const SPAN = 8u; // partial sums each of the first round's 8 invocations adds: LANES / 8

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

// #include "q_term_sums.wgsl"

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
  if (k % 16u == 0u) {
    let chunks = k / 16u;
    for (var i = lane; i < chunks; i += LANES) {
      let q = rows * chunks + i;
      let xi = 4u * i;
      chunk(weight[q.x], weight[q.y], weight[q.z], weight[q.w], x[xi], x[xi + 1u], x[xi + 2u], x[xi + 3u]);
    }
  } else {
    let words = (k + 3u) / 4u;
    let full = k / 4u;
    for (var j = lane; j < full; j += LANES) {
      word4(words_at(rows, words, j), x[j]);
    }
    if (full < words && lane == full % LANES) {
      let live = vec4u(0u, 1u, 2u, 3u) < vec4u(k % 4u);
      word4(words_at(rows, words, full), select(vec4f(0.0), x[full], live));
    }
  }

  let first = lid.y * LANES;
  partial[first + lane] = sums();
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
        y[row + r] = q8_row_result(row + r, scales[row + r] * s[r]);
      }
    }
  }
}
