// stft/fft: the same spectrum as stft/kernel, out[b, f, k] = sum_n w[n] frame(b, f)[n] e^(-2 pi i k n / nFft),
// by a radix-2 FFT in workgroup memory, one frame per workgroup, for nFft a power of two up to
// 2,048 (two f32 arrays of 2,048 fill the 16 KiB of workgroup storage every WebGPU device has).
// The frame is read from x with torch's centred reflection (the edge sample not repeated), windowed,
// and stored in bit-reversed order; log2(nFft) decimation-in-time stages follow, each butterfly
// (a, b) -> (a + t, a - t) with t = b * twiddles[k * nFft / span], the twiddles e^(-2 pi i m / nFft)
// computed in f64 on the host and rounded once (WGSL's sin and cos are only 2^-11 accurate). The
// first nFft / 2 + 1 bins are written as (re, im) pairs.
struct Params {
  rows: u32,    // batch * frames
  n_fft: u32,
  log2_n: u32,
  bins: u32,    // nFft / 2 + 1
  frames: u32,
  length: u32,
  hop: u32,
  pad: u32,     // nFft / 2
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> window: array<f32>;
@group(0) @binding(2) var<storage, read> twiddles: array<vec2f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec2f>;
@group(0) @binding(4) var<uniform> params: Params;

const CAPACITY: u32 = 2048u;
const THREADS: u32 = 256u; // = the workgroup size

var<workgroup> re: array<f32, CAPACITY>;
var<workgroup> im: array<f32, CAPACITY>;

// Sample n of the windowed frame that starts `first` samples into signal b (reflected at the ends).
fn frame_sample(b: u32, first: i32, n: u32) -> f32 {
  var i = first + i32(n);
  if (i < 0) {
    i = -i;
  }
  let last = i32(params.length) - 1;
  if (i > last) {
    i = 2 * last - i;
  }
  return x[b * params.length + u32(i)] * window[n];
}

// Component p (0: re, 1: im) of bin k, summed term by term over the frame, leaving out the terms
// whose basis value is exactly 0 (quarter turns: cos at 4m = nFft or 3 nFft, sin at m = 0 or 2m =
// nFft), as the reference defines the transform. A frame holding a NaN or an infinity makes the
// butterflies multiply it by those zeros (NaN) or spread it through both components of a twiddle, so
// an output that comes out NaN or infinite (tested from its bits at the store, after the stages) is
// formed again here; a finite output never met a non-finite sample. twiddles[m] = e^(-2 pi i m / nFft)
// for m < nFft / 2, and e^(-2 pi i m / nFft) = -twiddles[m - nFft / 2] past it.
fn exact_component(b: u32, first: i32, k: u32, p: u32) -> f32 {
  let n_fft = params.n_fft;
  let half = n_fft / 2u;
  var sum = 0.0;
  var m = 0u; // k n mod nFft
  for (var n = 0u; n < n_fft; n++) {
    let quarter = select(m == 0u || m == half, 4u * m == n_fft || 4u * m == 3u * n_fft, p == 0u);
    if (!quarter) {
      let w = select(twiddles[m], -twiddles[m - half], m >= half);
      sum += frame_sample(b, first, n) * w[p];
    }
    m = (m + k) % n_fft;
  }
  return sum;
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) id: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) t: u32,
) {
  // Frames beyond 65,535 fold into y: row = id.x + id.y * num_workgroups.x.
  let row = id.x + id.y * grid.x;
  if (row >= params.rows) {
    return;
  }
  let n_fft = params.n_fft;
  let b = row / params.frames;
  let first = i32((row - b * params.frames) * params.hop) - i32(params.pad);
  let last = i32(params.length) - 1;
  let signal_at = b * params.length;
  let shift = 32u - params.log2_n;
  for (var n = t; n < n_fft; n += THREADS) {
    var i = first + i32(n);
    if (i < 0) {
      i = -i;
    }
    if (i > last) {
      i = 2 * last - i;
    }
    let slot = reverseBits(n) >> shift;
    re[slot] = x[signal_at + u32(i)] * window[n];
    im[slot] = 0.0;
  }
  workgroupBarrier();
  var half = 1u;
  for (var stage = 0u; stage < params.log2_n; stage++) {
    let step = n_fft / (2u * half);
    for (var j = t; j < n_fft / 2u; j += THREADS) {
      let k = j & (half - 1u);
      let i0 = ((j - k) << 1u) + k;
      let i1 = i0 + half;
      let w = twiddles[k * step];
      let br = re[i1];
      let bi = im[i1];
      let tr = br * w.x - bi * w.y;
      let ti = br * w.y + bi * w.x;
      let ar = re[i0];
      let ai = im[i0];
      re[i0] = ar + tr;
      im[i0] = ai + ti;
      re[i1] = ar - tr;
      im[i1] = ai - ti;
    }
    workgroupBarrier();
    half <<= 1u;
  }
  let at = row * params.bins;
  for (var k = t; k < params.bins; k += THREADS) {
    var v = vec2f(re[k], im[k]);
    let nonfinite = (bitcast<vec2u>(v) & vec2u(0x7f800000u)) == vec2u(0x7f800000u);
    if (nonfinite.x) {
      v.x = exact_component(b, first, k, 0u);
    }
    if (nonfinite.y) {
      v.y = exact_component(b, first, k, 1u);
    }
    out[at + k] = v;
  }
}
