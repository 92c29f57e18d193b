// One key's share of the output phase in flash_attention's kernels: the outer product of its
// probabilities for this invocation's rows (p_top: rows 4ty..4ty+3, p_bottom: 64+4ty..64+4ty+3) and
// its v quads (vl: column quad dv_left, vr: dv_right) added into the accumulators
// (gemm_acc8x8.wgsl). Written out in the loop over the block's keys, which declares p_top, p_bottom,
// vl and vr: the kernels differ only in where v comes from (memory or the staged block).
      acc0_left += p_top.x * vl;
      acc0_right += p_top.x * vr;
      acc1_left += p_top.y * vl;
      acc1_right += p_top.y * vr;
      acc2_left += p_top.z * vl;
      acc2_right += p_top.z * vr;
      acc3_left += p_top.w * vl;
      acc3_right += p_top.w * vr;
      acc4_left += p_bottom.x * vl;
      acc4_right += p_bottom.x * vr;
      acc5_left += p_bottom.y * vl;
      acc5_right += p_bottom.y * vr;
      acc6_left += p_bottom.z * vl;
      acc6_right += p_bottom.z * vr;
      acc7_left += p_bottom.w * vl;
      acc7_right += p_bottom.w * vr;
