// matvec/q4g128_rows64: y[n] = sum_g scales[n, g] * sum_{k in group g} code[n, k] * x[k] (W4A32,
// group 128), for weights with many rows (an output head). The format and the decode are
// q4g128.nvidia's: the weight is [N, ceil(K/8)] u32, eight two's-complement codes per word, least
// significant nibble first; scales is [N, ceil(K/128)]; x is [K].
//
// Each invocation sums two rows over the same columns, and only 8 invocations share a row where
// q4g128.nvidia has 64: a workgroup is 8 invocations across K times 32 groups of two rows, 64 rows.
// It walks K in tiles of 4096 columns whose 1024 vec4s of x the workgroup copies into workgroup
// memory (swizzled, as in q4g128.nvidia: vec4 i at i ^ ((i / 8) % 8)) and all 64 rows share; each
// invocation takes two vec4<u32> of 32 codes of each of its rows per step (four 16-byte loads in
// flight) and their group scales, and multiplies each vec4's partial dot product by its scale (a
// vec4 never straddles two groups). The tile's memory then takes the partial sums: one barrier, and
// one invocation per row adds its 8.
//
// Why: at 102400 x 1792, q4g128.nvidia runs 6,400 workgroups that each stage x and reduce 64
// partial sums per row for a single step of K, and that fixed work sets the pace (its skeleton,
// with the weight loads and the decode both cut, took 34.3 us of its 69.4; H200, 2026-11-30, GPU
// timestamps, warm clocks; harness/baselines/nvidia-h200-log/11-q4b.txt). This kernel ran that
// shape in 55.8 us (38.3% of the bandwidth roofline against 30.7%), but with fewer workgroups it
// loses where N is small: 8192 x 8192 24.1% against 27.7%, 14336 x 4096 27.6% against 29.5%. The
// plan therefore takes it only for weights of at least QUANTIZED_TALL_MIN_ROWS rows
// (ops/matvec/mod.ts).
//
// When K % 32 == 0 a row is a whole number of vec4<u32> and the tiled path runs; otherwise one word
// at a time with x read from global memory, and the last word of a row, whose high nibbles are
// padding, is read with the x lanes past K replaced by 0 (and x past its end not read) so that the
// padding never counts.

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

const LANES = 8u; // invocations across K
const GROUPS = 32u; // groups of two rows per workgroup
const ROWS = 64u; // rows per workgroup: 2 * GROUPS
const TILE = 128u; // vec4<u32> of each row per tile (4096 columns)

// #include "q4_magic.wgsl"

// #include "q4_chunk.wgsl"

// #include "q_term_sums.wgsl"

// The x tile (8 vec4s for each of the tile's TILE vec4<u32>), then the partial sums.
var<workgroup> scratch: array<vec4f, 8u * TILE>;

@compute @workgroup_size(8, 32)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
  let lane = lid.x;
  let n = params.n;
  let k = params.k;
  let row = ((wid.x + wid.y * groups.x) * GROUPS + lid.y) * 2u; // this invocation's first row
  // Rows past N are read as row N - 1, so that no load needs a guard, and never written.
  let r0 = min(row, n - 1u);
  let r1 = min(row + 1u, n - 1u);
  var a0 = 0.0;
  var a1 = 0.0;
  let ngroups = (k + 127u) / 128u; // scales per row
  let g0 = r0 * ngroups;
  let g1 = r1 * ngroups;
  if (k % 32u == 0u) {
    let chunks = k / 32u; // vec4<u32> per row
    let b0 = r0 * chunks;
    let b1 = r1 * chunks;
    let xv = k / 4u; // x's vec4s
    let tid = lid.y * LANES + lane; // this invocation's index in the workgroup
    for (var t = 0u; t < chunks; t += TILE) { // tiles of 128 chunks: 1024 vec4s of x
      workgroupBarrier(); // the previous tile is no longer read
      { let i = tid + 0u; if (8u * t + i < xv) { scratch[i ^ ((i >> 3u) & 7u)] = x[8u * t + i]; } }
      { let i = tid + 256u; if (8u * t + i < xv) { scratch[i ^ ((i >> 3u) & 7u)] = x[8u * t + i]; } }
      { let i = tid + 512u; if (8u * t + i < xv) { scratch[i ^ ((i >> 3u) & 7u)] = x[8u * t + i]; } }
      { let i = tid + 768u; if (8u * t + i < xv) { scratch[i ^ ((i >> 3u) & 7u)] = x[8u * t + i]; } }
      workgroupBarrier();
      let tend = min(chunks - t, TILE); // chunks in this tile
      var c = lane; // chunk relative to the tile
      for (; c + 1u * LANES < tend; c += 2u * LANES) {
        let c0 = c + 0u * LANES;
        let c1 = c + 1u * LANES;
        let q00 = weight[b0 + t + c0];
        let q01 = weight[b1 + t + c0];
        let q10 = weight[b0 + t + c1];
        let q11 = weight[b1 + t + c1];
        let s00 = scales[g0 + (t + c0) / 4u];
        let s01 = scales[g1 + (t + c0) / 4u];
        let s10 = scales[g0 + (t + c1) / 4u];
        let s11 = scales[g1 + (t + c1) / 4u];
        let sw0 = c0 & 7u; // the swizzle of chunk c0's x vec4s
        let x00 = scratch[8u * c0 + (0u ^ sw0)];
        let x01 = scratch[8u * c0 + (1u ^ sw0)];
        let x02 = scratch[8u * c0 + (2u ^ sw0)];
        let x03 = scratch[8u * c0 + (3u ^ sw0)];
        let x04 = scratch[8u * c0 + (4u ^ sw0)];
        let x05 = scratch[8u * c0 + (5u ^ sw0)];
        let x06 = scratch[8u * c0 + (6u ^ sw0)];
        let x07 = scratch[8u * c0 + (7u ^ sw0)];
        let sw1 = c1 & 7u; // the swizzle of chunk c1's x vec4s
        let x10 = scratch[8u * c1 + (0u ^ sw1)];
        let x11 = scratch[8u * c1 + (1u ^ sw1)];
        let x12 = scratch[8u * c1 + (2u ^ sw1)];
        let x13 = scratch[8u * c1 + (3u ^ sw1)];
        let x14 = scratch[8u * c1 + (4u ^ sw1)];
        let x15 = scratch[8u * c1 + (5u ^ sw1)];
        let x16 = scratch[8u * c1 + (6u ^ sw1)];
        let x17 = scratch[8u * c1 + (7u ^ sw1)];
        a0 = fma(s00, chunk_dot(q00, x00, x01, x02, x03, x04, x05, x06, x07), a0);
        a1 = fma(s01, chunk_dot(q01, x00, x01, x02, x03, x04, x05, x06, x07), a1);
        a0 = fma(s10, chunk_dot(q10, x10, x11, x12, x13, x14, x15, x16, x17), a0);
        a1 = fma(s11, chunk_dot(q11, x10, x11, x12, x13, x14, x15, x16, x17), a1);
      }
      for (; c < tend; c += LANES) {
        let q00 = weight[b0 + t + c];
        let q01 = weight[b1 + t + c];
        let s00 = scales[g0 + (t + c) / 4u];
        let s01 = scales[g1 + (t + c) / 4u];
        let sw0 = c & 7u; // the swizzle of chunk c's x vec4s
        let x00 = scratch[8u * c + (0u ^ sw0)];
        let x01 = scratch[8u * c + (1u ^ sw0)];
        let x02 = scratch[8u * c + (2u ^ sw0)];
        let x03 = scratch[8u * c + (3u ^ sw0)];
        let x04 = scratch[8u * c + (4u ^ sw0)];
        let x05 = scratch[8u * c + (5u ^ sw0)];
        let x06 = scratch[8u * c + (6u ^ sw0)];
        let x07 = scratch[8u * c + (7u ^ sw0)];
        a0 = fma(s00, chunk_dot(q00, x00, x01, x02, x03, x04, x05, x06, x07), a0);
        a1 = fma(s01, chunk_dot(q01, x00, x01, x02, x03, x04, x05, x06, x07), a1);
      }
    }
  } else {
    let words = (k + 7u) / 8u; // words per row
    let full = k / 8u; // words with no padding
    let b0 = r0 * words;
    let b1 = r1 * words;
    for (var j = lane; j < full; j += LANES) {
      let w0 = weight[(b0 + j) / 4u][(b0 + j) % 4u];
      let w1 = weight[(b1 + j) / 4u][(b1 + j) % 4u];
      let xa = x[2u * j];
      let xb = x[2u * j + 1u];
      a0 = fma(scales[g0 + j / 16u], dot(fma((bitcast<vec4f>((vec4u(w0 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, (bitcast<vec4f>((vec4u(w0) & MASK) ^ MAGIC) - BIAS) * xa), vec4f(1.0)), a0);
      a1 = fma(scales[g1 + j / 16u], dot(fma((bitcast<vec4f>((vec4u(w1 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, (bitcast<vec4f>((vec4u(w1) & MASK) ^ MAGIC) - BIAS) * xa), vec4f(1.0)), a1);
    }
    if (full < words && lane == full % LANES) {
      let left = k % 8u; // live columns of the last word
      let xa = select(vec4f(0.0), x[2u * full], vec4u(0u, 1u, 2u, 3u) < vec4u(left));
      var xb = vec4f(0.0);
      if (left > 4u) {
        xb = select(vec4f(0.0), x[2u * full + 1u], vec4u(4u, 5u, 6u, 7u) < vec4u(left));
      }
      let w0 = weight[(b0 + full) / 4u][(b0 + full) % 4u];
      let w1 = weight[(b1 + full) / 4u][(b1 + full) % 4u];
      a0 = fma(scales[g0 + full / 16u], dot(fma((bitcast<vec4f>((vec4u(w0 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, (bitcast<vec4f>((vec4u(w0) & MASK) ^ MAGIC) - BIAS) * xa), vec4f(1.0)), a0);
      a1 = fma(scales[g1 + full / 16u], dot(fma((bitcast<vec4f>((vec4u(w1 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, (bitcast<vec4f>((vec4u(w1) & MASK) ^ MAGIC) - BIAS) * xa), vec4f(1.0)), a1);
    }
  }

  workgroupBarrier(); // the last x tile is no longer read: its memory takes the partial sums
  let first = lid.y * LANES; // this row group's partial sums
  scratch[first + lane] = vec4f(a0, a1, 0.0, 0.0);
  workgroupBarrier();
  if (lane < 2u && row + lane < n) {
    let p = first;
    let sum = ((scratch[p][lane] + scratch[p + 1u][lane]) + (scratch[p + 2u][lane] + scratch[p + 3u][lane])) +
      ((scratch[p + 4u][lane] + scratch[p + 5u][lane]) + (scratch[p + 6u][lane] + scratch[p + 7u][lane]));
    y[row + lane] = q4_row_result(row + lane, sum);
  }
}
