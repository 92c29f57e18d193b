// The walk over K of the 128 x 128 tile with b as [K, N] (kernel, f16storage, kernel_fused), after
// tile128_origin.wgsl: what each invocation stages of b, whether the tile is interior, the vec4
// indices of its unchecked loads, the accumulators (gemm_acc8x8.wgsl), and the loop over blocks of
// 16 (loads, stores to workgroup memory, a barrier, the k-steps of k_steps128.wgsl, a barrier).
// Declares interior and nq, which tile128_store_interior.wgsl uses. Needs the kernel's checked
// load_a(row, k) and load_b(k, col) (four consecutive f32 values, zeros outside the matrix) and its
// unchecked a_quad(i) and b_quad(i) (vec4 i of a and of b, as f32).
  // And four consecutive columns of two rows of b (b_k and b_k + 8).
  let b_k = lid / LANES;
  let b_col = col0 + (lid % LANES) * 4u;
  let b_lane = lid % LANES;

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
    b_s[b_k][b_lane] = b_top;
    b_s[b_k + 8u][b_lane] = b_bottom;
    workgroupBarrier();
// #include "k_steps128.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }
