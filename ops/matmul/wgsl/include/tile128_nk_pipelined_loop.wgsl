// The walk over K of linear_pipelined (a Linear weight [N, K] in b's place): tile128_kn_pipelined_loop.wgsl's
// two stages with tile128_nk_loop.wgsl's staging (four consecutive k of rows a_row and a_row + 64 of
// a and of the weight per invocation per block, the weight's written transposed by stage_w_in).
// Declares interior and nq, which tile128_store_interior.wgsl uses. Needs the kernel's checked
// load_a(row, k) and load_weight(n, k), and stage_a_in and stage_w_in.
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

  // The four loads of the block at k0, all issued before any is used.
  var a_top: vec4f;
  var a_bottom: vec4f;
  var w_top: vec4f;
  var w_bottom: vec4f;
  if (0u < k_fast) {
    a_top = a[a_top_at];
    a_bottom = a[a_bottom_at];
    w_top = weight[w_top_at];
    w_bottom = weight[w_bottom_at];
  } else {
    a_top = load_a(row0 + a_row, a_k);
    a_bottom = load_a(row0 + a_row + 64u, a_k);
    w_top = load_weight(col0 + a_row, a_k);
    w_bottom = load_weight(col0 + a_row + 64u, a_k);
  }
  stage_a_in(0u, a_row, a_k, a_top);
  stage_a_in(0u, a_row + 64u, a_k, a_bottom);
  stage_w_in(0u, a_row, a_k, w_top);
  stage_w_in(0u, a_row + 64u, a_k, w_bottom);
  workgroupBarrier();

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    let st = (k0 / STEP) % 2u;
    let k1 = k0 + STEP; // the next block, loaded during this one's k-steps
    if (k1 < k_fast) {
      a_top = a[a_top_at + k1 / 4u];
      a_bottom = a[a_bottom_at + k1 / 4u];
      w_top = weight[w_top_at + k1 / 4u];
      w_bottom = weight[w_bottom_at + k1 / 4u];
    } else if (k1 < params.k) {
      a_top = load_a(row0 + a_row, k1 + a_k);
      a_bottom = load_a(row0 + a_row + 64u, k1 + a_k);
      w_top = load_weight(col0 + a_row, k1 + a_k);
      w_bottom = load_weight(col0 + a_row + 64u, k1 + a_k);
    }
// #include "k_steps128_pipelined.wgsl"
    // The next block into the other stage, which every invocation finished reading before the
    // previous block's barrier; this block's barrier makes it visible to all.
    if (k1 < params.k) {
      stage_a_in(1u - st, a_row, a_k, a_top);
      stage_a_in(1u - st, a_row + 64u, a_k, a_bottom);
      stage_w_in(1u - st, a_row, a_k, w_top);
      stage_w_in(1u - st, a_row + 64u, a_k, w_bottom);
    }
    workgroupBarrier();
  }
