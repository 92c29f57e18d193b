// The walk over K of the f32 64 x 64 tile with a Linear weight [N, K] in b's place (linear_tile64,
// linear_tile64_fused), after tile64_origin.wgsl and the accumulators (gemm64_acc.wgsl): per block of
// 16, four consecutive k (a_k ..) of rows a_row and a_row + 32 of a's block and of rows
// col0 + a_row and col0 + a_row + 32 of the weight, a's staged transposed by stage_t and the
// weight's by stage_w (into b_s, the layout the k-steps read b in), a barrier, the k-steps of
// gemm64_k_steps.wgsl, a barrier. Needs the kernel's load_a(row, k) and load_weight(n, k).
  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    // All four loads before any store, so that they are in flight together.
    let a_top = load_a(row0 + a_row, k0 + a_k);
    let a_bottom = load_a(row0 + a_row + 32u, k0 + a_k);
    let w_top = load_weight(col0 + a_row, k0 + a_k);
    let w_bottom = load_weight(col0 + a_row + 32u, k0 + a_k);
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 32u, a_k, a_bottom);
    stage_w(a_row, a_k, w_top);
    stage_w(a_row + 32u, a_k, w_bottom);
    workgroupBarrier();
// #include "gemm64_k_steps.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }
