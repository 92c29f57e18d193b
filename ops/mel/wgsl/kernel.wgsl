// mel/kernel: out = x @ filterbank, optionally as 10 log10(max(out, 1e-10)); x is the power spectrum
// [rows, nFreqs], filterbank [nFreqs, nMels], out [rows, nMels], all f32 row-major. A 64 x 64-tiled
// GEMM (harness/wgsl/gemm64_gathered.wgsl) whose loads read scalars with bounds checks (nFreqs is
// odd for an even nFft, so rows of x do not start on vec4 boundaries) and whose store applies the
// decibel conversion. log10 is log2 times log10(2): WGSL has no log10.
struct Params {
  m: u32,  // rows
  n: u32,  // nMels
  k: u32,  // nFreqs
  db: u32, // 1: AmplitudeToDB(stype="power")
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> filterbank: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const DB_FLOOR = 1e-10;
const TEN_LOG10_2 = 3.0102999566398120;

fn x_at(row: u32, k: u32) -> f32 {
  return select(0.0, x[row * params.k + k], k < params.k);
}

// Bins k .. k + 3 of row `row` of x, zeros outside.
fn load_a(row: u32, k: u32) -> vec4f {
  if (row >= params.m) {
    return vec4f(0.0);
  }
  return vec4f(x_at(row, k), x_at(row, k + 1u), x_at(row, k + 2u), x_at(row, k + 3u));
}

fn fb_at(k: u32, col: u32) -> f32 {
  return select(0.0, filterbank[k * params.n + col], col < params.n);
}

// Bands col .. col + 3 of row k of the filterbank, zeros outside.
fn load_b(k: u32, col: u32) -> vec4f {
  if (k >= params.k) {
    return vec4f(0.0);
  }
  return vec4f(fb_at(k, col), fb_at(k, col + 1u), fb_at(k, col + 2u), fb_at(k, col + 3u));
}

// The decibels keep NaN, as torch's clamp does (WGSL's max may return the floor for a NaN, which
// read -100 dB; NaN is read from the bits, which a compiler cannot fold away). Once per output.
fn put(row: u32, col: u32, v: f32) {
  if (col < params.n) {
    let nan = (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
    out[row * params.n + col] = select(v, TEN_LOG10_2 * log2(max(v, DB_FLOOR)), params.db != 0u && !nan);
  }
}

// Bands col .. col + 3 of row `row` of out; those outside are skipped.
fn store_c(row: u32, col: u32, v: vec4f) {
  if (row >= params.m) {
    return;
  }
  put(row, col, v.x);
  put(row, col + 1u, v.y);
  put(row, col + 2u, v.z);
  put(row, col + 3u, v.w);
}

// #include "gemm64_gathered.wgsl"
