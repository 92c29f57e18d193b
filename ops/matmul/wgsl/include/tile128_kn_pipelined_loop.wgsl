// The walk over K of kernel_pipelined (b as [K, N]), after tile128_origin.wgsl: tile128_kn_loop.wgsl's
// staging (four consecutive k of rows a_row and a_row + 64 of a, one vec4 of rows b_k and b_k + 8 of
// b per invocation per block; interior tiles load their full blocks unchecked at vec4 indices
// computed once) over two stages. Block 0 is staged before the loop; then per block, the next
// block's four loads are issued, this block's 16 k-steps run from its stage
// (k_steps128_pipelined.wgsl), the loaded values are stored to the other stage, and one barrier ends
// the block. Declares interior and nq, which tile128_store_interior.wgsl uses. Needs the kernel's
// checked load_a(row, k) and load_b(k, col), its unchecked a_quad(i) and b_quad(i), and stage_a_in.
  let b_k = lid / LANES;
  let b_col = col0 + (lid % LANES) * 4u;
  let b_lane = lid % LANES;

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

  // The four loads of the block at k0, all issued before any is used.
  var a_top: vec4f;
  var a_bottom: vec4f;
  var b_top: vec4f;
  var b_bottom: vec4f;
  if (0u < k_fast) {
    a_top = a_quad(a_top_at);
    a_bottom = a_quad(a_bottom_at);
    b_top = b_quad(b_top_at);
    b_bottom = b_quad(b_bottom_at);
  } else {
    a_top = load_a(row0 + a_row, a_k);
    a_bottom = load_a(row0 + a_row + 64u, a_k);
    b_top = load_b(b_k, b_col);
    b_bottom = load_b(b_k + 8u, b_col);
  }
  stage_a_in(0u, a_row, a_k, a_top);
  stage_a_in(0u, a_row + 64u, a_k, a_bottom);
  b_s[0u][b_k][b_lane] = b_top;
  b_s[0u][b_k + 8u][b_lane] = b_bottom;
  workgroupBarrier();

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    let st = (k0 / STEP) % 2u;
    let k1 = k0 + STEP; // the next block, loaded during this one's k-steps
    if (k1 < k_fast) {
      a_top = a_quad(a_top_at + k1 / 4u);
      a_bottom = a_quad(a_bottom_at + k1 / 4u);
      b_top = b_quad(b_top_at + k1 * nq);
      b_bottom = b_quad(b_bottom_at + k1 * nq);
    } else if (k1 < params.k) {
      a_top = load_a(row0 + a_row, k1 + a_k);
      a_bottom = load_a(row0 + a_row + 64u, k1 + a_k);
      b_top = load_b(k1 + b_k, b_col);
      b_bottom = load_b(k1 + b_k + 8u, b_col);
    }
// #include "k_steps128_pipelined.wgsl"
    // The next block into the other stage, which every invocation finished reading before the
    // previous block's barrier; this block's barrier makes it visible to all.
    if (k1 < params.k) {
      stage_a_in(1u - st, a_row, a_k, a_top);
      stage_a_in(1u - st, a_row + 64u, a_k, a_bottom);
      b_s[1u - st][b_k][b_lane] = b_top;
      b_s[1u - st][b_k + 8u][b_lane] = b_bottom;
    }
    workgroupBarrier();
  }
