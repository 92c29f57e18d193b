// matvec/q4g128.nvidia: y[n] = sum_g scales[n, g] * sum_{k in group g} code[n, k] * x[k] (W4A32, group 128).
// The weight is [N, ceil(K/8)] u32, eight two's-complement codes per word, least significant nibble
// first; scales is [N, ceil(K/128)]; x is [K].
//
// Each invocation sums four rows at once over the same columns, so that every activation it reads
// serves four rows of codes (a code is half a byte and its activation 4). A workgroup is 64
// invocations across K times 4 groups of four rows (16 rows), and walks K in tiles of 4096 columns:
// each invocation loads two vec4<u32> of 32 codes of each of its four rows (eight 16-byte loads in
// flight) and their scales, then the workgroup copies the tile's 1024 vec4s of x into workgroup
// memory, and each invocation takes its columns' activations from there. Each vec4<u32>'s decode
// and FMAs are one function, chunk_dot (q4_chunk.wgsl), into four f32 accumulators local to main,
// and each row group's 64 partial sums (vec4s: four rows each) are reduced by a tree in workgroup
// memory: six halvings, each with all of its additions at once. chunk_dot in place of its eight
// written-out copies ran within 2% of them at every bench shape (H200, 2026-11-30, GPU timestamps,
// warm clocks; harness/baselines/nvidia-h200-log/16-review.txt).
//
// Why x goes through workgroup memory: an invocation's 32 codes need 8 vec4s of x, so neighbouring
// invocations read x 128 bytes apart and each x load of a warp touches 32 cache lines. Staged, the
// tile is read from global memory once per workgroup, a vec4 per invocation at neighbouring
// addresses, and shared by the four row groups. It is stored swizzled (vec4 i at i ^ ((i / 8) % 8))
// so that the eight invocations of a quarter warp, reading vec4s 128 bytes apart, hit eight
// different groups of four banks.
//
// Measured on the H200, 2026-11-30, GPU timestamps, warm clocks, at the five bench shapes (figures
// per shape in mod.ts), this kernel ran at 9.2-27.8% of the bandwidth roofline, faster on all five
// than the kernel it replaced, the portable design at 128 x 2 (x read from global memory, one
// vec4<u32> of each row in flight, accumulators in module-scope private variables, a reduction in
// which 8 invocations add 16 sums each, then one adds those 8: 7.0-21.8%; 4096 x 4096: 589 -> 767
// GB/s, 102400 x 1792: 723 -> 1250), and than q8row.nvidia's design applied to q4 (x read from
// global memory, 128 x 2, one vec4<u32> of each row in flight: 7.2-23.6%). The kernel measured kept
// the partial sums in 4 KiB of workgroup memory of their own (20 KiB in all); this one reuses the x
// tile for them, behind one more barrier, to stay within WebGPU's default 16 KiB.
//
// Codes are decoded without an integer-to-float conversion (which NVIDIA runs at a fraction of the
// FMA rate): each nibble is masked in place into the mantissa of a float, with its sign bit flipped
// (two's complement to offset binary), and the float's bias subtracted, exactly. Nibble j of a half
// word (0-3, and 4-7 after a 16-bit shift) sits at bits 4j .. 4j + 3 of a float of exponent
// 2^(23 - 4j), whose unit makes the nibble's lowest bit worth 1, so a decoded half word is its four
// codes themselves. Each vec4<u32> (or word) is summed and then multiplied by its group's scale: it
// never straddles two groups (32 and 8 divide 128), so the scale multiplies a partial dot product,
// never a single term.
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

const LANES = 64u; // invocations across K
const GROUPS = 4u; // groups of four rows per workgroup
const ROWS = 16u; // rows per workgroup: 4 * GROUPS
const TILE = 128u; // vec4<u32> of each row per tile (4096 columns), two per invocation

// #include "q4_magic.wgsl"

// #include "q4_chunk.wgsl"

// #include "q_term_sums.wgsl"

// The x tile (8 vec4s for each of the tile's TILE vec4<u32>), then the partial sums.
var<workgroup> scratch: array<vec4f, 8u * TILE>;

@compute @workgroup_size(64, 4)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
// The start of the NVIDIA quantized kernels' main: this invocation's lane across K and its four rows,
// r0..r3, clamped to N - 1 (rows past N are read as row N - 1, so that no load needs a guard, and
// never written). More than 65,535 workgroups fold into y: group = id.x + id.y * num_workgroups.x.
  let lane = lid.x;
  let n = params.n;
  let k = params.k;
  let row = ((wid.x + wid.y * groups.x) * GROUPS + lid.y) * 4u; // this invocation's first row
  let r0 = min(row, n - 1u);
  let r1 = min(row + 1u, n - 1u);
  let r2 = min(row + 2u, n - 1u);
  let r3 = min(row + 3u, n - 1u);
  let first = lid.y * LANES; // this row group's partial sums in scratch
  var a0 = 0.0; // row r0's dot product
  var a1 = 0.0;
  var a2 = 0.0;
  var a3 = 0.0;
  let ngroups = (k + 127u) / 128u; // scales per row
  let g0 = r0 * ngroups;
  let g1 = r1 * ngroups;
  let g2 = r2 * ngroups;
  let g3 = r3 * ngroups;
  if (k % 32u == 0u) {
    let chunks = k / 32u; // vec4<u32> per row
    let last = chunks - 1u;
    let b0 = r0 * chunks;
    let b1 = r1 * chunks;
    let b2 = r2 * chunks;
    let b3 = r3 * chunks;
    let xlast = k / 4u - 1u; // x's last vec4
    let tid = first + lane; // this invocation's index in the workgroup
    let slot = tid ^ ((tid >> 3u) & 7u); // vec4 tid of a tile, swizzled (tid + 256: slot + 256, and so on)
    let sw = lane & 7u; // the swizzle of this invocation's reads
    for (var t = 0u; t < chunks; t += TILE) {
      // This invocation's chunks of the tile, c0 and c1, and their loads (past the row: its last chunk).
      let c0 = t + lane;
      let c1 = t + lane + LANES;
      let l0 = min(c0, last);
      let l1 = min(c1, last);
      let q00 = weight[b0 + l0];
      let q01 = weight[b1 + l0];
      let q02 = weight[b2 + l0];
      let q03 = weight[b3 + l0];
      let q10 = weight[b0 + l1];
      let q11 = weight[b1 + l1];
      let q12 = weight[b2 + l1];
      let q13 = weight[b3 + l1];
      let s00 = scales[g0 + l0 / 4u];
      let s01 = scales[g1 + l0 / 4u];
      let s02 = scales[g2 + l0 / 4u];
      let s03 = scales[g3 + l0 / 4u];
      let s10 = scales[g0 + l1 / 4u];
      let s11 = scales[g1 + l1 / 4u];
      let s12 = scales[g2 + l1 / 4u];
      let s13 = scales[g3 + l1 / 4u];
      workgroupBarrier(); // the previous tile is no longer read
      let src = 8u * t + tid; // x's vec4 for slot
      if (src <= xlast) { scratch[slot] = x[src]; }
      if (src + 256u <= xlast) { scratch[slot + 256u] = x[src + 256u]; }
      if (src + 512u <= xlast) { scratch[slot + 512u] = x[src + 512u]; }
      if (src + 768u <= xlast) { scratch[slot + 768u] = x[src + 768u]; }
      workgroupBarrier();
      if (c0 < chunks) {
        let at = 8u * lane; // this chunk's 8 vec4s of x in the tile, swizzled by sw
        let x0 = scratch[at + (0u ^ sw)];
        let x1 = scratch[at + (1u ^ sw)];
        let x2 = scratch[at + (2u ^ sw)];
        let x3 = scratch[at + (3u ^ sw)];
        let x4 = scratch[at + (4u ^ sw)];
        let x5 = scratch[at + (5u ^ sw)];
        let x6 = scratch[at + (6u ^ sw)];
        let x7 = scratch[at + (7u ^ sw)];
        a0 = fma(s00, chunk_dot(q00, x0, x1, x2, x3, x4, x5, x6, x7), a0);
        a1 = fma(s01, chunk_dot(q01, x0, x1, x2, x3, x4, x5, x6, x7), a1);
        a2 = fma(s02, chunk_dot(q02, x0, x1, x2, x3, x4, x5, x6, x7), a2);
        a3 = fma(s03, chunk_dot(q03, x0, x1, x2, x3, x4, x5, x6, x7), a3);
      }
      if (c1 < chunks) {
        let at = 8u * (lane + LANES); // this chunk's 8 vec4s of x in the tile, swizzled by sw
        let x0 = scratch[at + (0u ^ sw)];
        let x1 = scratch[at + (1u ^ sw)];
        let x2 = scratch[at + (2u ^ sw)];
        let x3 = scratch[at + (3u ^ sw)];
        let x4 = scratch[at + (4u ^ sw)];
        let x5 = scratch[at + (5u ^ sw)];
        let x6 = scratch[at + (6u ^ sw)];
        let x7 = scratch[at + (7u ^ sw)];
        a0 = fma(s10, chunk_dot(q10, x0, x1, x2, x3, x4, x5, x6, x7), a0);
        a1 = fma(s11, chunk_dot(q11, x0, x1, x2, x3, x4, x5, x6, x7), a1);
        a2 = fma(s12, chunk_dot(q12, x0, x1, x2, x3, x4, x5, x6, x7), a2);
        a3 = fma(s13, chunk_dot(q13, x0, x1, x2, x3, x4, x5, x6, x7), a3);
      }
    }
  } else {
    let words = (k + 7u) / 8u; // words per row
    let full = k / 8u; // words with no padding
    let b0 = r0 * words;
    let b1 = r1 * words;
    let b2 = r2 * words;
    let b3 = r3 * words;
    for (var j = lane; j < full; j += LANES) {
      let w0 = weight[(b0 + j) / 4u][(b0 + j) % 4u];
      let w1 = weight[(b1 + j) / 4u][(b1 + j) % 4u];
      let w2 = weight[(b2 + j) / 4u][(b2 + j) % 4u];
      let w3 = weight[(b3 + j) / 4u][(b3 + j) % 4u];
      let s0 = scales[g0 + j / 16u];
      let s1 = scales[g1 + j / 16u];
      let s2 = scales[g2 + j / 16u];
      let s3 = scales[g3 + j / 16u];
      let xa = x[2u * j];
      let xb = x[2u * j + 1u];
      {
        var v = (bitcast<vec4f>((vec4u(w0) & MASK) ^ MAGIC) - BIAS) * xa;
        v = fma((bitcast<vec4f>((vec4u(w0 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, v);
        a0 = fma(s0, (v.x + v.y) + (v.z + v.w), a0);
      }
      {
        var v = (bitcast<vec4f>((vec4u(w1) & MASK) ^ MAGIC) - BIAS) * xa;
        v = fma((bitcast<vec4f>((vec4u(w1 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, v);
        a1 = fma(s1, (v.x + v.y) + (v.z + v.w), a1);
      }
      {
        var v = (bitcast<vec4f>((vec4u(w2) & MASK) ^ MAGIC) - BIAS) * xa;
        v = fma((bitcast<vec4f>((vec4u(w2 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, v);
        a2 = fma(s2, (v.x + v.y) + (v.z + v.w), a2);
      }
      {
        var v = (bitcast<vec4f>((vec4u(w3) & MASK) ^ MAGIC) - BIAS) * xa;
        v = fma((bitcast<vec4f>((vec4u(w3 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, v);
        a3 = fma(s3, (v.x + v.y) + (v.z + v.w), a3);
      }
    }
    if (full < words && lane == full % LANES) {
      let w0 = weight[(b0 + full) / 4u][(b0 + full) % 4u];
      let w1 = weight[(b1 + full) / 4u][(b1 + full) % 4u];
      let w2 = weight[(b2 + full) / 4u][(b2 + full) % 4u];
      let w3 = weight[(b3 + full) / 4u][(b3 + full) % 4u];
      let left = k % 8u; // live columns of the last word
      let xa = select(vec4f(0.0), x[2u * full], vec4u(0u, 1u, 2u, 3u) < vec4u(left));
      var xb = vec4f(0.0);
      if (left > 4u) {
        xb = select(vec4f(0.0), x[2u * full + 1u], vec4u(4u, 5u, 6u, 7u) < vec4u(left));
      }
      {
        var v = (bitcast<vec4f>((vec4u(w0) & MASK) ^ MAGIC) - BIAS) * xa;
        v = fma((bitcast<vec4f>((vec4u(w0 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, v);
        a0 = fma(scales[g0 + full / 16u], (v.x + v.y) + (v.z + v.w), a0);
      }
      {
        var v = (bitcast<vec4f>((vec4u(w1) & MASK) ^ MAGIC) - BIAS) * xa;
        v = fma((bitcast<vec4f>((vec4u(w1 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, v);
        a1 = fma(scales[g1 + full / 16u], (v.x + v.y) + (v.z + v.w), a1);
      }
      {
        var v = (bitcast<vec4f>((vec4u(w2) & MASK) ^ MAGIC) - BIAS) * xa;
        v = fma((bitcast<vec4f>((vec4u(w2 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, v);
        a2 = fma(scales[g2 + full / 16u], (v.x + v.y) + (v.z + v.w), a2);
      }
      {
        var v = (bitcast<vec4f>((vec4u(w3) & MASK) ^ MAGIC) - BIAS) * xa;
        v = fma((bitcast<vec4f>((vec4u(w3 >> 16u) & MASK) ^ MAGIC) - BIAS), xb, v);
        a3 = fma(scales[g3 + full / 16u], (v.x + v.y) + (v.z + v.w), a3);
      }
    }
  }

  workgroupBarrier(); // the last x tile is no longer read: its memory takes the partial sums
  scratch[first + lane] = vec4f(a0, a1, a2, a3);
  workgroupBarrier();
// The end of the NVIDIA quantized kernels' tree reduction. Each row group's partial sums (a vec4
// each: its four rows) are in scratch[first + lane] for lanes below 64 (a kernel of 128 lanes has
// added its upper half), past a barrier; six halvings in place, every addition of a halving at once
// and a barrier after each, leave the four rows' dot products in scratch[first].
  if (lane < 32u) { scratch[first + lane] += scratch[first + lane + 32u]; }
  workgroupBarrier();
  if (lane < 16u) { scratch[first + lane] += scratch[first + lane + 16u]; }
  workgroupBarrier();
// The last four halvings of the tree reduction (all of it in q8row_rows64): each row group's partial sums (a vec4 each: its four rows) in scratch[first + lane]
// for lanes below 16, past a barrier, halved in place, every addition of a halving at once and a
// barrier after each, leave the four rows' dot products in scratch[first].
  if (lane < 8u) { scratch[first + lane] += scratch[first + lane + 8u]; }
  workgroupBarrier();
  if (lane < 4u) { scratch[first + lane] += scratch[first + lane + 4u]; }
  workgroupBarrier();
  if (lane < 2u) { scratch[first + lane] += scratch[first + lane + 2u]; }
  workgroupBarrier();
  if (lane == 0u) { scratch[first] += scratch[first + 1u]; }
  workgroupBarrier();
  if (lane < 4u && row + lane < n) {
    y[row + lane] = q4_row_result(row + lane, scratch[first][lane]);
  }
}
