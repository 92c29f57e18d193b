// stft/inverse (istft): each frame inverted as irfft, windowed, overlap-added and divided by the
// overlap-added squared window, as one GEMM with the overlap-add folded into its depth.
//
// Output sample p of the overlap-added signal (p counted from the start of frame 0) lies in hop
// block blk = p / hop at r = p % hop, and receives sample r + d * hop of frame blk - d for each
// d < reach = ceil(nFft / hop). So with rows = hop blocks and columns = r:
//   c[blk, r] = sum_{d, j} x[blk - d, j] * basis[d * jp + j, r]
// where j runs over the 2 * bins (re, im) values of a frame (padded to jp, a multiple of 16, so a
// block of 16 k-steps never straddles two d) and basis[d * jp + j, r] is the windowed irfft
// coefficient of value j at frame sample n = r + d * hop (zero when n >= nFft): w[n] * c_k / nFft *
// cos(2 pi k n / nFft) for a real part, -w[n] * c_k / nFft * sin(...) for an imaginary part, with
// c_k = 1 for DC and (even nFft) Nyquist, whose imaginary parts are dropped, and 2 otherwise. It is
// built on the host once per (nFft, hop). No atomics and no second pass: every output is one
// GEMM element, divided by its envelope sum_d w[r + d * hop]^2 (over the frames that reach it) as
// it is stored; only the rows and columns inside the returned span are stored.
struct Params {
  m: u32,           // batch * blocks
  n: u32,           // hop: the columns of c
  k: u32,           // reach * jp
  basis_q: u32,     // vec4s per row of the padded basis
  frames: u32,
  values: u32,      // 2 * bins: values per frame of x
  jp: u32,          // values padded to a multiple of 16
  blocks: u32,      // hop blocks per signal that hold returned samples
  first_block: u32, // the first of them
  n_fft: u32,
  start: u32,       // returned samples start at p = start
  length: u32,      // samples returned per signal
  reach: u32,       // ceil(nFft / hop): frames overlapping one sample, at most
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> basis: array<vec4f>;
@group(0) @binding(2) var<storage, read> window: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

// Values j .. j + 3 (j a multiple of 4) of frame blk - d of row `row`'s signal, at depth kk = d * jp + j;
// zeros for a frame before the first or after the last, and past the frame's values.
fn load_a(row: u32, kk: u32) -> vec4f {
  var v = vec4f(0.0);
  if (row >= params.m || kk >= params.k) {
    return v;
  }
  let d = kk / params.jp;
  let j = kk % params.jp;
  let b = row / params.blocks;
  let f = i32(params.first_block + row % params.blocks) - i32(d);
  if (f < 0 || f >= i32(params.frames) || j >= params.values) {
    return v;
  }
  let at = (b * params.frames + u32(f)) * params.values + j;
  v.x = x[at];
  v.y = x[at + 1u]; // values is even and j a multiple of 4, so j + 1 is inside the frame
  if (j + 2u < params.values) {
    v.z = x[at + 2u];
    v.w = x[at + 3u];
  }
  return v;
}

// Sample r of hop block blk of signal b, divided by the envelope, if it is a returned sample.
fn put(b: u32, blk: u32, r: u32, value: f32) {
  let t = i32(blk * params.n + r) - i32(params.start);
  if (r >= params.n || t < 0 || t >= i32(params.length)) {
    return;
  }
  var envelope = 0.0;
  for (var d = 0u; d < params.reach; d++) {
    let sample = r + d * params.n;
    if (sample < params.n_fft && d <= blk && blk - d < params.frames) {
      envelope += window[sample] * window[sample];
    }
  }
  out[b * params.length + u32(t)] = value / envelope;
}

// Columns col .. col + 3 of row `row` (signal b, hop block blk) of c.
fn store_c(row: u32, col: u32, v: vec4f) {
  if (row >= params.m) {
    return;
  }
  let b = row / params.blocks;
  let blk = params.first_block + row % params.blocks;
  put(b, blk, col, v.x);
  put(b, blk, col + 1u, v.y);
  put(b, blk, col + 2u, v.z);
  put(b, blk, col + 3u, v.w);
}

// Columns col .. col + 3 (col a multiple of 4) of row k of the basis, padded on the host to whole
// tiles (rows to a multiple of 16, columns to a multiple of 64), so the load needs no guard.
fn load_b(k: u32, col: u32) -> vec4f {
  return basis[k * params.basis_q + col / 4u];
}

// #include "gemm64_gathered.wgsl"
