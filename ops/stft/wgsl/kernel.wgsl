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

// Columns col .. col + 3 (col a multiple of 4) of row `row` of out, as two (re, im) pairs.
fn store_c(row: u32, col: u32, v: vec4f) {
  if (row >= params.m || col >= params.n) {
    return;
  }
  let at = (row * params.n + col) / 2u;
  out[at] = v.xy;
  if (col + 2u < params.n) {
    out[at + 1u] = v.zw;
  }
}

// Columns col .. col + 3 (col a multiple of 4) of row k of the basis, padded on the host to whole
// tiles (rows to a multiple of 16, columns to a multiple of 64), so the load needs no guard.
fn load_b(k: u32, col: u32) -> vec4f {
  return basis[k * params.basis_q + col / 4u];
}

// #include "gemm64_gathered.wgsl"
