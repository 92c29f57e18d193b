// The 64 x 64 q8 tile's accumulators (sums of a times the codes) times their columns' scales, in
// place: rows 4ty..4ty+3, columns 4tx..4tx+3 of the tile at (row0, col0). A column with an infinite
// scale then takes q8_infinite_scale.wgsl's sums instead (whole-vector selects, no run-time component
// index).
  {
    let col = col0 + tx * 4u;
    let col_scales = load_scales(col);
    acc0 *= col_scales;
    acc1 *= col_scales;
    acc2 *= col_scales;
    acc3 *= col_scales;
    let col_infinite = infinite(col_scales);
    if (any(col_infinite)) {
      let sums = infinite_scale_quad(row0 + ty * 4u, col, col_scales, col_infinite);
      acc0 = select(acc0, sums[0], col_infinite);
      acc1 = select(acc1, sums[1], col_infinite);
      acc2 = select(acc2, sums[2], col_infinite);
      acc3 = select(acc3, sums[3], col_infinite);
    }
  }
