// matmul/kernel: c = a @ b, a is [M, K], b is [K, N], c is [M, N], all f32 row-major.
// The 128 x 128 tile, for problems large enough to keep a GPU busy with it (see tile64 otherwise).
//
// Each workgroup computes one 128 x 128 tile of c; each of its 256 invocations owns 8 x 8 outputs
// in sixteen named vec4 accumulators, function-local variables of main. Invocation (tx, ty) =
// (lid % 16, lid / 16) owns rows 4ty..4ty+3 ("top") and 64+4ty..64+4ty+3 ("bottom") and columns
// 4tx..4tx+3 ("left") and 64+4tx..64+4tx+3 ("right"), so that neighbouring invocations read
// neighbouring vec4s of workgroup memory and write neighbouring vec4s of c. Per k, four vec4 reads
// of workgroup memory feed 64 FMAs.
//
// K is walked 16 at a time through one stage of workgroup memory (2 x 512 vec4s, 16 KiB: WebGPU's
// default maxComputeWorkgroupStorageSize): each invocation loads its share of the block (two vec4s
// of a, two of b) and stores it, a barrier, the block's 16 k-steps, a barrier. The k-steps are
// written out inline in main (k_steps128.wgsl), neither looped over (a driver may not unroll a WGSL
// loop) nor called as a function.
//
// Why this shape: on the H200 (Vulkan, no subgroups), a scratch kernel of this design (without the
// bound checks below) ran 4096^3 at 37.0 TFLOP/s where the previous NVIDIA kernel (two stages of
// K-step 16 at 32 KiB with the next block prefetched into registers, the accumulators module-scope
// private variables and each k-step a function call) ran at 29.5. Which of the three differences
// matter most was not measured apart.
//
// a's block is staged transposed, so one vec4 read gives an invocation four of its rows at one k,
// and b's block as vec4s along a row. a, b and c are read and written a vec4 at a time when their
// rows start on 16-byte boundaries (K % 4 == 0 for a, N % 4 == 0 for b and c), and element by
// element otherwise. Every guard is in the staging loads and the final stores, none in the k-steps:
// loads outside a or b stage zeros and stores outside c are skipped, so every M, N, K >= 1 works.
// Tiles beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.
//
// Interior tiles skip the guards: a tile wholly inside c, when K % 4 == 0 and N % 4 == 0, stages its
// full blocks of K with unchecked vec4 loads at indices computed once (a_quad, b_quad) and stores c
// unchecked; only a ragged last block of K and the edge tiles take the checked loads. The choice is
// one branch per block, the same for the whole workgroup, so the k-steps are written once. On the
// H200 (2026-11-30, GPU timestamps, warm clocks) this took 4096^3 from 34.8 to 36.4 TFLOP/s and the
// prefill shape 512 x 14336 x 4096 from 30.0 to 30.8; the same path as a second K loop of its own
// (the k-steps written twice) was slower (35.9 at 4096^3).

// The params and bindings of the f32 GEMMs (kernel, tile64): a, b and c as vec4s.
// The params of every matmul kernel, packed by mod.ts: c is [m, n], a is [m, k].
struct Params {
  m: u32,
  n: u32,
  k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> b: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

// #include "load_a.wgsl"

// #include "load_b.wgsl"

// The unchecked loads of the interior blocks (see main), f32 operands: vec4 i of a and of b.
fn a_quad(i: u32) -> vec4f {
  return a[i];
}

fn b_quad(i: u32) -> vec4f {
  return b[i];
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
