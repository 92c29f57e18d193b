// The walk over K of the 128 x 128 tile with a Linear weight [N, K] in b's place (linear,
// linear_fused), after tile128_origin.wgsl. The weight's block is staged as a's is, and as q8row
// stages its decoded weight: each invocation loads four consecutive k (a_k ..) of two weight rows
// (col0 + a_row and col0 + a_row + 64), and stage_w writes them transposed into b_s, the layout the
// k-steps read b in, so the k-steps, the accumulators and the stores are kernel's. An interior tile
// (wholly inside c, K % 4 == 0, N % 4 == 0) loads its full blocks of K unchecked at vec4 indices
// computed once, as kernel's do (tile128_kn_loop.wgsl). Declares interior and nq, which
// tile128_store_interior.wgsl uses. Needs the kernel's load_a(row, k) and load_weight(n, k).
  let interior = row0 + TILE_M <= params.m && col0 + TILE_N <= params.n && params.k % 4u == 0u &&
    params.n % 4u == 0u;
  let k_fast = select(0u, params.k - params.k % STEP, interior);
  let kq = params.k / 4u; // vec4s per row of a and of the weight
  let nq = params.n / 4u; // vec4s per row of c
  let a_top_at = (row0 + a_row) * kq + a_k / 4u; // vec4 indices at k0 = 0
  let a_bottom_at = a_top_at + 64u * kq;
  let w_top_at = (col0 + a_row) * kq + a_k / 4u;
  let w_bottom_at = w_top_at + 64u * kq;

// #include "gemm_acc8x8.wgsl"

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    // All four loads before any store, so that they are in flight together.
    var a_top: vec4f;
    var a_bottom: vec4f;
    var w_top: vec4f;
    var w_bottom: vec4f;
    if (k0 < k_fast) {
      a_top = a[a_top_at + k0 / 4u];
      a_bottom = a[a_bottom_at + k0 / 4u];
      w_top = weight[w_top_at + k0 / 4u];
      w_bottom = weight[w_bottom_at + k0 / 4u];
    } else {
      a_top = load_a(row0 + a_row, k0 + a_k);
      a_bottom = load_a(row0 + a_row + 64u, k0 + a_k);
      w_top = load_weight(col0 + a_row, k0 + a_k);
      w_bottom = load_weight(col0 + a_row + 64u, k0 + a_k);
    }
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 64u, a_k, a_bottom);
    stage_w(a_row, a_k, w_top);
    stage_w(a_row + 64u, a_k, w_bottom);
    workgroupBarrier();
// #include "k_steps128.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }
