// stft/kernel: out[b, f, k, (re, im)] = sum_n frame(b, f)[n] * basis[n, 2k + (0 | 1)], a GEMM of
// the framed signal, [batch * frames, nFft], against the windowed DFT basis, [nFft, 2 * bins] with
// basis[n, 2k] = w[n] cos(2 pi k n / nFft) and basis[n, 2k + 1] = -w[n] sin(2 pi k n / nFft)
// (built once per nFft on the host, padded to whole tiles). The frames are never materialised:
// load_a reads row (b, f) of the framed signal straight from x, reflecting about the ends (torch's
// centred reflect padding, the edge sample not repeated). Frames overlap nFft / hop times, so x's
// reads mostly hit in cache. out is [batch * frames, 2 * bins] and 2 * bins is even, so outputs are
// stored as (re, im) vec2s.
struct Params {
  m: u32,       // batch * frames
  n: u32,       // 2 * bins, the columns of out
  k: u32,       // nFft
  basis_q: u32, // vec4s per row of the padded basis
  frames: u32,
  length: u32,
  hop: u32,
  pad: u32,     // floor(nFft / 2)
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> basis: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> out: array<vec2f>;
@group(0) @binding(3) var<uniform> params: Params;

// Sample s of signal b's padded copy, s counted from the start of the padding.
fn padded_sample(signal_at: u32, s: u32) -> f32 {
  var i = i32(s) - i32(params.pad);
  if (i < 0) {
    i = -i;
  }
  let last = i32(params.length) - 1;
  if (i > last) {
    i = 2 * last - i;
  }
  return x[signal_at + u32(i)];
}

// Samples k .. k + 3 of frame `row` (= b * frames + f), zeros past nFft or past the last frame.
fn load_a(row: u32, k: u32) -> vec4f {
  var v = vec4f(0.0);
  if (row >= params.m) {
    return v;
  }
  let b = row / params.frames;
  let first = (row % params.frames) * params.hop + k;
  let signal_at = b * params.length;
  if (k < params.k) {
    v.x = padded_sample(signal_at, first);
  }
  if (k + 1u < params.k) {
    v.y = padded_sample(signal_at, first + 1u);
  }
  if (k + 2u < params.k) {
    v.z = padded_sample(signal_at, first + 2u);
  }
  if (k + 3u < params.k) {
    v.w = padded_sample(signal_at, first + 3u);
  }
  return v;
}

// Column col of row `row` of out (component col % 2 of bin col / 2), summed term by term over the
// frame, leaving out the terms whose basis value is exactly 0 (quarter turns: cos at 4m = nFft or
// 3 nFft, sin at m = 0 or 2m = nFft; basis.ts makes those entries exact zeros), as the reference
// defines the transform. In the GEMM a NaN or infinite sample meets them as 0 * inf, NaN, so an
// output that comes out NaN or infinite (tested from its bits at the store) is formed again here; a
// finite output never met a non-finite sample.
fn exact_column(row: u32, col: u32) -> f32 {
  let n_fft = params.k;
  let k = col / 2u;
  let b = row / params.frames;
  let first = (row % params.frames) * params.hop;
  var sum = 0.0;
  var m = 0u; // k n mod nFft
  for (var n = 0u; n < n_fft; n++) {
    let quarter = select(m == 0u || 2u * m == n_fft, 4u * m == n_fft || 4u * m == 3u * n_fft, col % 2u == 0u);
    if (!quarter) {
      sum += padded_sample(b * params.length, first + n) * basis[n * params.basis_q + col / 4u][col % 4u];
    }
    m = (m + k) % n_fft;
  }
  return sum;
}

// Columns col .. col + 3 (col a multiple of 4) of row `row` of out, as two (re, im) pairs; a NaN or
// infinite one formed again by exact_column.
fn store_c(row: u32, col: u32, v: vec4f) {
  if (row >= params.m || col >= params.n) {
    return;
  }
  var c = v;
  let nonfinite = (bitcast<vec4u>(v) & vec4u(0x7f800000u)) == vec4u(0x7f800000u);
  if (any(nonfinite)) {
    for (var j = 0u; j < 4u; j++) {
      if (nonfinite[j] && col + j < params.n) {
        c[j] = exact_column(row, col + j);
      }
    }
  }
  let at = (row * params.n + col) / 2u;
  out[at] = c.xy;
  if (col + 2u < params.n) {
    out[at + 1u] = c.zw;
  }
}

// Columns col .. col + 3 (col a multiple of 4) of row k of the basis, padded on the host to whole
// tiles (rows to a multiple of 16, columns to a multiple of 64), so the load needs no guard.
fn load_b(k: u32, col: u32) -> vec4f {
  return basis[k * params.basis_q + col / 4u];
}

// #include "gemm64_gathered.wgsl"
