// The walk over K of linear_pipelined (a Linear weight [N, K] in b's place): tile128_kn_pipelined_loop.wgsl's
// with the weight staged as a is, one vec4 (four consecutive k) of weight row col0 + s_row per
// invocation per block, written transposed by stage_w into the layout in which kernel_pipelined
// stages b. Declares interior and nq, which tile128_store_interior.wgsl uses. Needs the kernel's
// checked load_a(row, k) and load_weight(n, k), and stage_t and stage_w.
  // Four consecutive k (s_k, s_k + 1, ..) of row s_row of a's block and of the weight's.
  let s_row = lid / 2u;
  let s_k = (lid % 2u) * 4u;

  let interior = row0 + TILE_M <= params.m && col0 + TILE_N <= params.n && params.k % 4u == 0u &&
    params.n % 4u == 0u;
  let k_fast = select(0u, params.k - params.k % STEP, interior);
  let kq = params.k / 4u; // vec4s per row of a and of the weight
  let nq = params.n / 4u; // vec4s per row of c
  let a_at = (row0 + s_row) * kq + s_k / 4u; // vec4 indices at k = 0
  let w_at = (col0 + s_row) * kq + s_k / 4u;

// #include "gemm_acc8x8.wgsl"

  // Block 0, into stage 0.
  if (k_fast > 0u) {
    stage_t(s_row, s_k, a[a_at]);
    stage_w(s_row, s_k, weight[w_at]);
  } else {
    stage_t(s_row, s_k, load_a(row0 + s_row, s_k));
    stage_w(s_row, s_k, load_weight(col0 + s_row, s_k));
  }
  workgroupBarrier();

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    let stage = (k0 / STEP) % 2u;
    let k1 = k0 + STEP; // the next block
    // The next block's loads, before this block's k-steps, so that they are in flight during them.
    var a_next = vec4f(0.0);
    var w_next = vec4f(0.0);
    if (k1 < k_fast) {
      a_next = a[a_at + k1 / 4u];
      w_next = weight[w_at + k1 / 4u];
    } else if (k1 < params.k) {
      a_next = load_a(row0 + s_row, k1 + s_k);
      w_next = load_weight(col0 + s_row, k1 + s_k);
    }
    let a_base = stage * STEP * LANES + ty;
    let b_base = stage * STEP * LANES + tx;
// #include "k_steps128_pipelined.wgsl"
    // The next block into the other stage, which every invocation finished reading before the
    // previous block's barrier; this block's barrier makes it visible to all.
    if (k1 < params.k) {
      let other = (1u - stage) * STEP;
      stage_t(s_row, s_k + other, a_next);
      stage_w(s_row, s_k + other, w_next);
    }
    workgroupBarrier();
  }
