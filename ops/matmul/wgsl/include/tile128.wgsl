// The 128 x 128 tile of matmul/kernel and matmul/f16storage (kernel.wgsl says the design and why):
// its constants, workgroup memory and main, all of the kernel but its bindings and loads. The
// including kernel declares Params and params (m, n, k), c as array<vec4f>, and the staging loads:
// the checked load_a(row, k) and load_b(k, col), each four consecutive f32 values, zeros outside
// the matrix, and the unchecked a_quad(i) and b_quad(i), vec4 i of a and of b as f32.
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

// #include "gemm_stage_t.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile128_origin.wgsl"
  // And four consecutive columns of two rows of b (b_k and b_k + 8).
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

// #include "gemm_acc8x8.wgsl"

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
// #include "tile128_store.wgsl"
  }
}
