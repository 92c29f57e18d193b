// The 128 x 128 q8 tile's accumulators (sums of a times the codes) times their columns' scales, in
// place: rows 4ty..4ty+3 and 64+4ty..64+4ty+3, columns 4tx..4tx+3 (left) and 64+4tx..64+4tx+3
// (right) of the tile at (row0, col0). A column with an infinite scale then takes
// q8_infinite_scale.wgsl's sums instead (a test per quad of columns; the sums run only for such a
// column; whole-vector selects, no run-time component index).
  {
    let left_col = col0 + tx * 4u;
    let left_scales = load_scales(left_col);
    let right_scales = load_scales(left_col + 64u);
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
    let left_infinite = infinite(left_scales);
    let right_infinite = infinite(right_scales);
    let top_row = row0 + ty * 4u;
    if (any(left_infinite)) {
      let top = infinite_scale_quad(top_row, left_col, left_scales, left_infinite);
      let bottom = infinite_scale_quad(top_row + 64u, left_col, left_scales, left_infinite);
      acc0_left = select(acc0_left, top[0], left_infinite);
      acc1_left = select(acc1_left, top[1], left_infinite);
      acc2_left = select(acc2_left, top[2], left_infinite);
      acc3_left = select(acc3_left, top[3], left_infinite);
      acc4_left = select(acc4_left, bottom[0], left_infinite);
      acc5_left = select(acc5_left, bottom[1], left_infinite);
      acc6_left = select(acc6_left, bottom[2], left_infinite);
      acc7_left = select(acc7_left, bottom[3], left_infinite);
    }
    if (any(right_infinite)) {
      let top = infinite_scale_quad(top_row, left_col + 64u, right_scales, right_infinite);
      let bottom = infinite_scale_quad(top_row + 64u, left_col + 64u, right_scales, right_infinite);
      acc0_right = select(acc0_right, top[0], right_infinite);
      acc1_right = select(acc1_right, top[1], right_infinite);
      acc2_right = select(acc2_right, top[2], right_infinite);
      acc3_right = select(acc3_right, top[3], right_infinite);
      acc4_right = select(acc4_right, bottom[0], right_infinite);
      acc5_right = select(acc5_right, bottom[1], right_infinite);
      acc6_right = select(acc6_right, bottom[2], right_infinite);
      acc7_right = select(acc7_right, bottom[3], right_infinite);
    }
  }
