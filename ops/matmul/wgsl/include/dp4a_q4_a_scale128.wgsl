// The end of the 128 x 128 q4 dp4a tiles' product (dp4a_q4_product128.wgsl and its _pipelined
// form): the f32 sums acc0_left .. acc7_right (gemm_acc8x8.wgsl), every group added, times the
// activation scale a_scales[m] of their row: the finished outputs, which tile128_epilogue.wgsl and
// tile128_store.wgsl read. One text for both walks over K. Needs dp4a_setup.wgsl's names and
// dp4a_ops.wgsl; the rows' scales from dp4a_a_scales128.wgsl.
  {
// #include "dp4a_a_scales128.wgsl"
    acc0_left *= a_scale0;
    acc0_right *= a_scale0;
    acc1_left *= a_scale1;
    acc1_right *= a_scale1;
    acc2_left *= a_scale2;
    acc2_right *= a_scale2;
    acc3_left *= a_scale3;
    acc3_right *= a_scale3;
    acc4_left *= a_scale4;
    acc4_right *= a_scale4;
    acc5_left *= a_scale5;
    acc5_right *= a_scale5;
    acc6_left *= a_scale6;
    acc6_right *= a_scale6;
    acc7_left *= a_scale7;
    acc7_right *= a_scale7;
  }
