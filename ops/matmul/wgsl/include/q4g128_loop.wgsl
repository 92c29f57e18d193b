// The walk over K of q4g128 and q4g128_fused (q4g128.wgsl says the design), after
// tile128_origin.wgsl and the accumulators (gemm_acc8x8.wgsl): per block of 16, two vec4s of a and
// two half-words of the weight (rows col0 + a_row and col0 + a_row + 64, codes a_k .. a_k + 3) with
// their groups' scales, a's staged transposed, the codes decoded times their scales and staged by
// stage_w, a barrier, the k-steps, a barrier.
  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    // All the loads before any store, so that they are in flight together.
    let a_top = load_a(row0 + a_row, k0 + a_k);
    let a_bottom = load_a(row0 + a_row + 64u, k0 + a_k);
    let w_top = load_word(col0 + a_row, k0 + a_k);
    let w_bottom = load_word(col0 + a_row + 64u, k0 + a_k);
    let s_top = load_scale(col0 + a_row, k0 + a_k);
    let s_bottom = load_scale(col0 + a_row + 64u, k0 + a_k);
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 64u, a_k, a_bottom);
    stage_w(a_row, a_k, decode(w_top, k0 + a_k, s_top));
    stage_w(a_row + 64u, a_k, decode(w_bottom, k0 + a_k, s_bottom));
    workgroupBarrier();
// #include "k_steps128.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }
