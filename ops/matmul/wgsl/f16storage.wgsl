// matmul/f16storage: c = a @ b, a is [M, K] and b is [K, N], both IEEE binary16 row-major, c is
// [M, N] f32 row-major. Two halves per u32 word, the lower-indexed element in the low 16 bits (what
// unpack2x16float reads), element e of a matrix in word e / 2: a row straddles two words when its
// length is odd. The operands are bound as vec2u, pairs of words (four halves, 8 bytes).
//
// Storage only: the halves are decoded to f32 (exactly) as they are staged, and all arithmetic is
// f32 (f32 FMAs into f32 accumulators), so the kernel needs no shader-f16 and does not use the f16
// rate; what it saves over matmul/kernel is half of the operands' bytes.
//
// The tiling is matmul/kernel's (see kernel.wgsl for the design and why): each workgroup computes
// one 128 x 128 tile of c; each of its 256 invocations owns 8 x 8 outputs in sixteen named vec4
// accumulators, function-local variables of main, rows 4ty..4ty+3 and 64+4ty..64+4ty+3 and columns
// 4tx..4tx+3 and 64+4tx..64+4tx+3 for (tx, ty) = (lid % 16, lid / 16). K is walked 16 at a time
// through one stage of workgroup memory (16 KiB of f32: a's block transposed, b's as vec4s along a
// row): loads, stores, a barrier, the 16 k-steps written out inline in main, a barrier.
//
// Four halves of a row of a are read as one pair of words when K % 4 == 0 (each row then starts on
// an 8-byte boundary), element by element otherwise; likewise b and N % 4, and c is written a vec4
// at a time when N % 4 == 0. Every guard is in the staging loads and the final stores, none in the
// k-steps: loads outside a or b stage zeros (the padding half of an odd-length matrix's last word is
// never read) and stores outside c are skipped, so every M, N, K >= 1 works. Tiles beyond 65,535
// fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.
//
// Interior tiles (wholly inside c, K % 4 == 0, N % 4 == 0) stage their full blocks of K with
// unchecked loads of pairs of words and store c unchecked, as matmul/kernel's do. On the H200
// (2026-11-30, GPU timestamps, warm clocks) that took 4096^3 from 31.6 to 36.5 TFLOP/s and
// 512 x 14336 x 4096 from 26.2 to 31.0. Reading the operands as vec4<f16> with shader-f16 instead of
// through unpack2x16float changed nothing (31.6 at 4096^3; 36.3 with the interior path), and f16
// arithmetic would not pay here: through this WebGPU the H200 runs f16 FMAs at the f32 rate (64.5
// TFLOP/s at vector widths 1, 2 and 4), so there is no .f16 variant.

// The params of every matmul kernel, packed by mod.ts: c is [m, n], a is [m, k].
struct Params {
  m: u32,
  n: u32,
  k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<vec2u>;
@group(0) @binding(1) var<storage, read> b: array<vec2u>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

// Four consecutive k of row `row` of a (packed halves, a pair of words per vec2u), from column k (a
// multiple of 4), as f32; zeros outside a. When K % 4 == 0 the four halves are one aligned pair of
// words; otherwise each is read from its own word, element e of a being half e % 2 of word e / 2.
fn load_a(row: u32, k: u32) -> vec4f {
  var v = vec4f(0.0);
  if (row < params.m && k < params.k) {
    let e = row * params.k + k;
    if (params.k % 4u == 0u) {
      let w = a[e / 4u];
      v = vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (k + j < params.k) {
          let word = a[(e + j) / 4u][((e + j) / 2u) % 2u];
          v[j] = unpack2x16float(word)[(e + j) % 2u];
        }
      }
    }
  }
  return v;
}

// Four consecutive columns of row k of b (packed halves, a pair of words per vec2u), from column col
// (a multiple of 4), as f32; zeros outside b. When N % 4 == 0 the four halves are one aligned pair
// of words; otherwise each is read from its own word, element e of b being half e % 2 of word e / 2.
fn load_b(k: u32, col: u32) -> vec4f {
  var v = vec4f(0.0);
  if (k < params.k && col < params.n) {
    let e = k * params.n + col;
    if (params.n % 4u == 0u) {
      let w = b[e / 4u];
      v = vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (col + j < params.n) {
          let word = b[(e + j) / 4u][((e + j) / 2u) % 2u];
          v[j] = unpack2x16float(word)[(e + j) % 2u];
        }
      }
    }
  }
  return v;
}

// The unchecked loads of the interior blocks (see main), packed-half operands: the four halves of
// pair of words i of a and of b, as f32.
fn a_quad(i: u32) -> vec4f {
  let w = a[i];
  return vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
}

fn b_quad(i: u32) -> vec4f {
  let w = b[i];
  return vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
}

// The 128 x 128 tile. It stages through the checked load_a(row, k) and load_b(k, col), each four
// consecutive f32 values, zeros outside the matrix, and the unchecked a_quad(i) and b_quad(i).
const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 16u; // columns of a (rows of b) per block
const LANES = 32u; // vec4s across 128 rows or columns
const HALF = 16u; // vec4 offset of the bottom rows / right columns: 64 / 4

// a_t[k * LANES + i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// b_s[k * LANES + j] holds b[k0 + k, col0 + 4j .. 4j + 3], as f32 whatever a and b are stored as.
var<workgroup> a_t: array<vec4f, STEP * LANES>;
var<workgroup> b_s: array<vec4f, STEP * LANES>;

// #include "store_c.wgsl"

// #include "stage_t.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// The tile of c this workgroup computes, at (row0, col0): tiles beyond 65,535 fold into y, and a
// workgroup past the last tile returns.
  let tiles_n = (params.n + TILE_N - 1u) / TILE_N;
  let tiles = ((params.m + TILE_M - 1u) / TILE_M) * tiles_n;
  let tile = wid.x + wid.y * groups.x;
  if (tile >= tiles) {
    return;
  }
  let row0 = (tile / tiles_n) * TILE_M;
  let col0 = (tile % tiles_n) * TILE_N;
  let tx = lid % HALF;
  let ty = lid / HALF;

  // What this invocation stages per block: four consecutive k of two rows of a (a_row and
  // a_row + 64), and four consecutive columns of two rows of b (b_k and b_k + 8).
  let a_row = lid / 4u;
  let a_k = (lid % 4u) * 4u;
  let b_k = lid / LANES;
  let b_col = col0 + (lid % LANES) * 4u;
  let b_slot = b_k * LANES + lid % LANES;

  // An interior tile lies wholly inside c, and its rows of a, b and c start on vec4 boundaries
  // (K % 4 == 0, N % 4 == 0): its full blocks of K (k0 < k_fast) are staged with unchecked loads at
  // precomputed vec4 indices, and its outputs stored unchecked. A ragged last block of K, and every
  // block of an edge tile, take the checked loads. The branch is the same for the whole workgroup.
  let interior = row0 + TILE_M <= params.m && col0 + TILE_N <= params.n && params.k % 4u == 0u &&
    params.n % 4u == 0u;
  let k_fast = select(0u, params.k - params.k % STEP, interior);
  let kq = params.k / 4u; // vec4s per row of a
  let nq = params.n / 4u; // vec4s per row of b and c
  let a_top_at = (row0 + a_row) * kq + a_k / 4u; // vec4 indices at k0 = 0
  let a_bottom_at = a_top_at + 64u * kq;
  let b_top_at = b_k * nq + b_col / 4u;
  let b_bottom_at = b_top_at + 8u * nq;

// The 8 x 8 outputs of this invocation of a 128 x 128 tile, sixteen named vec4s declared as
// function-local variables of main (not module-scope private ones; see kernel.wgsl): acc0-3 are rows
// 4ty..4ty+3 of the tile, acc4-7 rows 64+4ty..64+4ty+3; _left holds columns 4tx..4tx+3, _right
// columns 64+4tx..64+4tx+3.
  var acc0_left = vec4f(0.0);
  var acc0_right = vec4f(0.0);
  var acc1_left = vec4f(0.0);
  var acc1_right = vec4f(0.0);
  var acc2_left = vec4f(0.0);
  var acc2_right = vec4f(0.0);
  var acc3_left = vec4f(0.0);
  var acc3_right = vec4f(0.0);
  var acc4_left = vec4f(0.0);
  var acc4_right = vec4f(0.0);
  var acc5_left = vec4f(0.0);
  var acc5_right = vec4f(0.0);
  var acc6_left = vec4f(0.0);
  var acc6_right = vec4f(0.0);
  var acc7_left = vec4f(0.0);
  var acc7_right = vec4f(0.0);

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    // All four loads before any store, so that they are in flight together.
    var a_top: vec4f;
    var a_bottom: vec4f;
    var b_top: vec4f;
    var b_bottom: vec4f;
    if (k0 < k_fast) {
      a_top = a_quad(a_top_at + k0 / 4u);
      a_bottom = a_quad(a_bottom_at + k0 / 4u);
      b_top = b_quad(b_top_at + k0 * nq);
      b_bottom = b_quad(b_bottom_at + k0 * nq);
    } else {
      a_top = load_a(row0 + a_row, k0 + a_k);
      a_bottom = load_a(row0 + a_row + 64u, k0 + a_k);
      b_top = load_b(k0 + b_k, b_col);
      b_bottom = load_b(k0 + b_k + 8u, b_col);
    }
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 64u, a_k, a_bottom);
    b_s[b_slot] = b_top;
    b_s[b_slot + 8u * LANES] = b_bottom;
    workgroupBarrier();
// #include "k_steps128.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }

  if (interior) {
    let c_at = (row0 + 4u * ty) * nq + col0 / 4u + tx; // vec4 index of acc0_left
    c[c_at] = acc0_left;
    c[c_at + HALF] = acc0_right;
    c[c_at + nq] = acc1_left;
    c[c_at + nq + HALF] = acc1_right;
    c[c_at + 2u * nq] = acc2_left;
    c[c_at + 2u * nq + HALF] = acc2_right;
    c[c_at + 3u * nq] = acc3_left;
    c[c_at + 3u * nq + HALF] = acc3_right;
    c[c_at + 64u * nq] = acc4_left;
    c[c_at + 64u * nq + HALF] = acc4_right;
    c[c_at + 65u * nq] = acc5_left;
    c[c_at + 65u * nq + HALF] = acc5_right;
    c[c_at + 66u * nq] = acc6_left;
    c[c_at + 66u * nq + HALF] = acc6_right;
    c[c_at + 67u * nq] = acc7_left;
    c[c_at + 67u * nq + HALF] = acc7_right;
  } else {
// Stores the 128 x 128 tile's accumulators (declared above): this invocation's rows 4ty..4ty+3 and
// 64+4ty..64+4ty+3, columns 4tx..4tx+3 and 64+4tx..64+4tx+3 of the tile at (row0, col0).
  let top_row = row0 + ty * 4u;
  let bottom_row = top_row + 64u;
  let left_col = col0 + tx * 4u;
  let right_col = left_col + 64u;
  store_c(top_row, left_col, acc0_left);
  store_c(top_row, right_col, acc0_right);
  store_c(top_row + 1u, left_col, acc1_left);
  store_c(top_row + 1u, right_col, acc1_right);
  store_c(top_row + 2u, left_col, acc2_left);
  store_c(top_row + 2u, right_col, acc2_right);
  store_c(top_row + 3u, left_col, acc3_left);
  store_c(top_row + 3u, right_col, acc3_right);
  store_c(bottom_row, left_col, acc4_left);
  store_c(bottom_row, right_col, acc4_right);
  store_c(bottom_row + 1u, left_col, acc5_left);
  store_c(bottom_row + 1u, right_col, acc5_right);
  store_c(bottom_row + 2u, left_col, acc6_left);
  store_c(bottom_row + 2u, right_col, acc6_right);
  store_c(bottom_row + 3u, left_col, acc7_left);
  store_c(bottom_row + 3u, right_col, acc7_right);
  }
}
