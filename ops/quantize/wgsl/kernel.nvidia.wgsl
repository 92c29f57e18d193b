// quantize/kernel.nvidia: per-row absmax int8 quantization, the same function as the portable
// kernel (codes bit for bit, ties toward +Infinity; a row of zeros gets scale 0 and codes 0), tuned
// for bandwidth.
//
// One workgroup per row (rows beyond 65,535 fold into y). When the row is a whole number of vec4s
// and fits in registers (cols % 4 == 0, cols <= 256 * 4 * SLOTS = 8192), each invocation loads its
// share of the row as up to SLOTS vec4s, all before any is used, and keeps them: the row is read
// from memory once, the absmax is reduced in workgroup memory in two steps (256 -> 16 -> every
// invocation reads the 16), and the codes are written from registers as vec4s. Longer or
// misaligned rows take a strided loop over single elements that reads the row twice.
//
// The codes come from an f32 quotient where that is provably safe, and from the exact integer
// division of the portable kernel where it is not. q = |x| * f32(127 / absmax) has a relative
// error below 2.5 ulp (WGSL's division, for absmax in [2^-126, 2^126]) + 0.5 ulp (the product), so
// it is within 127.5 * 3 * 2^-23 < 5e-5 of the exact |x| * 127 / absmax. Rounding can only go
// the other way when the exact quotient is within that distance of a half-integer, so q is
// trusted when frac(q) is more than 1e-4 from 0.5, and otherwise the element is decided exactly.
// Rows whose absmax is outside [2^-100, 2^126] (where the division's accuracy is not promised or
// 127 / absmax would overflow) are decided exactly throughout. An integer division per element
// would cost more instructions than the memory system leaves time for.
struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> codes: array<vec4i>;
@group(0) @binding(2) var<storage, read_write> scales: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const WG: u32 = 256u;
const SLOTS: u32 = 8u;  // vec4s of the row each invocation holds: rows up to 8192 columns
const SMALLEST: u32 = 0x0d800000u;  // 2^-100 as f32 bits
const LARGEST: u32 = 0x7e800000u;   // 2^126 as f32 bits

var<workgroup> maxima: array<u32, WG>;
var<workgroup> maxima16: array<u32, 16>;

// #include "magnitude.wgsl"

// round(x * 127 / absmax), ties toward +Infinity, for |x| <= absmax (as bit patterns), exactly:
// the portable kernel's integer arithmetic.
fn exact_code(x_bits: u32, absmax_bits: u32) -> i32 {
// #include "exact_code_body.wgsl"
}

// The code of x, given the row's absmax bits and ratio = f32(127 / absmax) (used only when the
// row's absmax is in [2^-100, 2^126]).
fn code_of(x_value: f32, absmax_bits: u32, ratio: f32) -> i32 {
  let x_bits = bitcast<u32>(x_value);
  if (absmax_bits < SMALLEST || absmax_bits > LARGEST) {
    return exact_code(x_bits, absmax_bits);
  }
  let q = abs(x_value) * ratio;
  let whole = floor(q);
  let fraction = q - whole;
  if (abs(fraction - 0.5) <= 1e-4) {
    return exact_code(x_bits, absmax_bits);
  }
  let code = i32(whole) + select(0, 1, fraction > 0.5);
  return select(code, -code, x_bits >= 0x80000000u);
}

fn codes_of(v: vec4f, absmax_bits: u32, ratio: f32) -> vec4i {
  return vec4i(
    code_of(v.x, absmax_bits, ratio),
    code_of(v.y, absmax_bits, ratio),
    code_of(v.z, absmax_bits, ratio),
    code_of(v.w, absmax_bits, ratio),
  );
}

fn magnitude_bits(v: vec4f) -> u32 {
  let m = bitcast<vec4u>(v) & vec4u(0x7fffffffu);
  return max(max(m.x, m.y), max(m.z, m.w));
}

// The largest of every invocation's `largest`: for non-negative floats the order of their bit
// patterns as u32 is the order of their values, so the absmax is found exactly.
fn row_max(lid: u32, largest: u32) -> u32 {
  maxima[lid] = largest;
  workgroupBarrier();
  if (lid < 16u) {
    var m = maxima[lid];
    for (var k = 1u; k < 16u; k++) {
      m = max(m, maxima[lid + 16u * k]);
    }
    maxima16[lid] = m;
  }
  workgroupBarrier();
  var m = maxima16[0];
  for (var k = 1u; k < 16u; k++) {
    m = max(m, maxima16[k]);
  }
  return m;
}

fn x_at(i: u32) -> f32 {
  return x[i >> 2u][i & 3u];
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * grid.x;
  if (row >= params.rows) {
    return;
  }
  let cols = params.cols;

  if ((cols & 3u) == 0u && cols <= WG * SLOTS * 4u) {
    let quads = cols / 4u;
    let base = row * quads;
    var v: array<vec4f, SLOTS>;
    var largest = 0u;
    for (var k = 0u; k < SLOTS; k++) {
      let c = lid + k * WG;
      v[k] = vec4f(0.0);
      if (c < quads) {
        v[k] = x[base + c];
      }
    }
    for (var k = 0u; k < SLOTS; k++) {
      largest = max(largest, magnitude_bits(v[k]));
    }
    let absmax_bits = row_max(lid, largest);
    let absmax = bitcast<f32>(absmax_bits);
    if (lid == 0u) {
      scales[row] = absmax / 127.0;
    }
    let ratio = 127.0 / absmax;
    for (var k = 0u; k < SLOTS; k++) {
      let c = lid + k * WG;
      if (c < quads) {
        codes[base + c] = codes_of(v[k], absmax_bits, ratio);
      }
    }
    return;
  }

  let base = row * cols;
  var largest = 0u;
  for (var c = lid; c < cols; c += WG) {
    largest = max(largest, bitcast<u32>(x_at(base + c)) & 0x7fffffffu);
  }
  let absmax_bits = row_max(lid, largest);
  let absmax = bitcast<f32>(absmax_bits);
  if (lid == 0u) {
    scales[row] = absmax / 127.0;
  }
  let ratio = 127.0 / absmax;
  for (var c = lid; c < cols; c += WG) {
    let i = base + c;
    codes[i >> 2u][i & 3u] = code_of(x_at(i), absmax_bits, ratio);
  }
}
