// The walk over K of the 64 x 64 tile with b as [K, N] (gemm64_main_body.wgsl): 16 at a time, four
// loads (two rows of a, two vec4s of b), a's two rows staged transposed by stage_t, b's two vec4s as
// they are, a barrier, the k-steps of gemm64_k_steps.wgsl into the accumulators of gemm64_acc.wgsl, a
// barrier. Needs of main: tx, ty and the staging indices a_row, a_k (four consecutive k of rows
// a_row and a_row + 32 of a), b_k, b_col and b_lane (one vec4 of rows b_k and b_k + 8 of b); of the
// kernel: params.k, STEP, LANES, HALF, a_t, b_s, stage_t (gemm_stage_t.wgsl), and load_a(row, k)
// and load_b(k, col), four consecutive values each, zeros outside the matrix.
  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    // All four loads before any store, so that they are in flight together.
    let a_top = load_a(row0 + a_row, k0 + a_k);
    let a_bottom = load_a(row0 + a_row + 32u, k0 + a_k);
    let b_top = load_b(k0 + b_k, b_col);
    let b_bottom = load_b(k0 + b_k + 8u, b_col);
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 32u, a_k, a_bottom);
    b_s[b_k][b_lane] = b_top;
    b_s[b_k + 8u][b_lane] = b_bottom;
    workgroupBarrier();
// #include "gemm64_k_steps.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }
