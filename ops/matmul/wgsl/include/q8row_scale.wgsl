// The 128 x 128 q8 tile's accumulators (sums of a times the codes) times their columns' scales, in
// place: columns 4tx..4tx+3 (left) and 64+4tx..64+4tx+3 (right) of the tile at col0.
  {
    let left_scales = load_scales(col0 + tx * 4u);
    let right_scales = load_scales(col0 + tx * 4u + 64u);
    acc0_left *= left_scales;
    acc0_right *= right_scales;
    acc1_left *= left_scales;
    acc1_right *= right_scales;
    acc2_left *= left_scales;
    acc2_right *= right_scales;
    acc3_left *= left_scales;
    acc3_right *= right_scales;
    acc4_left *= left_scales;
    acc4_right *= right_scales;
    acc5_left *= left_scales;
    acc5_right *= right_scales;
    acc6_left *= left_scales;
    acc6_right *= right_scales;
    acc7_left *= left_scales;
    acc7_right *= right_scales;
  }
