// The 128 x 128 q8 tile's accumulators (sums of a times the codes) times their columns' scales, in
// place: rows 4ty..4ty+3 and 64+4ty..64+4ty+3, columns 4tx..4tx+3 (left) and 64+4tx..64+4tx+3
// (right) of the tile at (row0, col0). A column with an infinite scale then takes
// q8_infinite_scale.wgsl's sums instead (a test per quad of columns; the sums run only for such a
// column).
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
    if (any(left_infinite) || any(right_infinite)) {
      let top_row = row0 + ty * 4u;
      for (var j = 0u; j < 4u; j++) {
        if (left_infinite[j]) {
          let top = infinite_scale_rows(top_row, left_col + j, left_scales[j]);
          let bottom = infinite_scale_rows(top_row + 64u, left_col + j, left_scales[j]);
          acc0_left[j] = top.x;
          acc1_left[j] = top.y;
          acc2_left[j] = top.z;
          acc3_left[j] = top.w;
          acc4_left[j] = bottom.x;
          acc5_left[j] = bottom.y;
          acc6_left[j] = bottom.z;
          acc7_left[j] = bottom.w;
        }
        if (right_infinite[j]) {
          let top = infinite_scale_rows(top_row, left_col + 64u + j, right_scales[j]);
          let bottom = infinite_scale_rows(top_row + 64u, left_col + 64u + j, right_scales[j]);
          acc0_right[j] = top.x;
          acc1_right[j] = top.y;
          acc2_right[j] = top.z;
          acc3_right[j] = top.w;
          acc4_right[j] = bottom.x;
          acc5_right[j] = bottom.y;
          acc6_right[j] = bottom.z;
          acc7_right[j] = bottom.w;
        }
      }
    }
  }
