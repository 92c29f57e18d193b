// The walk over K of kernel_pipelined (b as [K, N]), after tile128_origin.wgsl (whose tile, tx and
// ty it uses; it stages with its own indices, one vec4 of a and one of b per invocation per block):
// block 0 is staged before the loop; then per block, the next block's two loads are issued, this
// block's 8 k-steps run from its stage (k_steps128_pipelined.wgsl), the loaded values are stored to
// the other stage, and one barrier ends the block. Interior tiles (wholly inside c, K % 4 == 0,
// N % 4 == 0) load their full blocks unchecked at vec4 indices computed once, as kernel's do.
// Declares interior and nq, which tile128_store_interior.wgsl uses. Needs the kernel's checked
// load_a(row, k) and load_b(k, col), its unchecked a_quad(i) and b_quad(i), and stage_t.
  // Four consecutive k (s_k, s_k + 1, ..) of row s_row of a's block, and four consecutive columns of
  // row b_k of b's.
  let s_row = lid / 2u;
  let s_k = (lid % 2u) * 4u;
  let b_k = lid / LANES;
  let b_col = col0 + (lid % LANES) * 4u;
  let b_slot = b_k * LANES + lid % LANES;

  let interior = row0 + TILE_M <= params.m && col0 + TILE_N <= params.n && params.k % 4u == 0u &&
    params.n % 4u == 0u;
  let k_fast = select(0u, params.k - params.k % STEP, interior);
  let kq = params.k / 4u; // vec4s per row of a
  let nq = params.n / 4u; // vec4s per row of b and c
  let a_at = (row0 + s_row) * kq + s_k / 4u; // vec4 indices at k = 0
  let b_at = b_k * nq + b_col / 4u;

// #include "gemm_acc8x8.wgsl"

  // Block 0, into stage 0.
  if (k_fast > 0u) {
    stage_t(s_row, s_k, a_quad(a_at));
    b_s[b_slot] = b_quad(b_at);
  } else {
    stage_t(s_row, s_k, load_a(row0 + s_row, s_k));
    b_s[b_slot] = load_b(b_k, b_col);
  }
  workgroupBarrier();

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    let stage = (k0 / STEP) % 2u;
    let k1 = k0 + STEP; // the next block
    // The next block's loads, before this block's k-steps, so that they are in flight during them.
    var a_next = vec4f(0.0);
    var b_next = vec4f(0.0);
    if (k1 < k_fast) {
      a_next = a_quad(a_at + k1 / 4u);
      b_next = b_quad(b_at + k1 * nq);
    } else if (k1 < params.k) {
      a_next = load_a(row0 + s_row, k1 + s_k);
      b_next = load_b(k1 + b_k, b_col);
    }
    let a_base = stage * STEP * LANES + ty;
    let b_base = stage * STEP * LANES + tx;
// #include "k_steps128_pipelined.wgsl"
    // The next block into the other stage, which every invocation finished reading before the
    // previous block's barrier; this block's barrier makes it visible to all.
    if (k1 < params.k) {
      let other = (1u - stage) * STEP;
      stage_t(s_row, s_k + other, a_next);
      b_s[b_slot + other * LANES] = b_next;
    }
    workgroupBarrier();
  }
