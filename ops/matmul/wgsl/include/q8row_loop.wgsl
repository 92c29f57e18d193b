// The walk over K of q8row and q8row_fused (q8row.wgsl says the design), after tile128_origin.wgsl and
// the accumulators (gemm_acc8x8.wgsl): per block of 16, two vec4s of a and two words of the weight
// (rows col0 + a_row and col0 + a_row + 64, codes a_k .. a_k + 3), a's staged transposed, the codes
// decoded and staged by stage_w, a barrier, the k-steps, a barrier. The sums are of a times the
// codes; q8row_scale.wgsl applies the scales.
  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    // All four loads before any store, so that they are in flight together.
    let a_top = load_a(row0 + a_row, k0 + a_k);
    let a_bottom = load_a(row0 + a_row + 64u, k0 + a_k);
    let w_top = load_word(col0 + a_row, k0 + a_k);
    let w_bottom = load_word(col0 + a_row + 64u, k0 + a_k);
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 64u, a_k, a_bottom);
    stage_w(a_row, a_k, decode(w_top, k0 + a_k));
    stage_w(a_row + 64u, a_k, decode(w_bottom, k0 + a_k));
    workgroupBarrier();
// #include "k_steps128.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }
