// The 64 x 64 q8 tile's accumulators (sums of a times the codes) times their columns' scales, in
// place: rows 4ty..4ty+3, columns 4tx..4tx+3 of the tile at (row0, col0). A column with an infinite
// scale then takes q8_infinite_scale.wgsl's sums instead.
  {
    let col = col0 + tx * 4u;
    let col_scales = load_scales(col);
    acc0 *= col_scales;
    acc1 *= col_scales;
    acc2 *= col_scales;
    acc3 *= col_scales;
    let col_infinite = infinite(col_scales);
    if (any(col_infinite)) {
      for (var j = 0u; j < 4u; j++) {
        if (col_infinite[j]) {
          let rows = infinite_scale_rows(row0 + ty * 4u, col + j, col_scales[j]);
          acc0[j] = rows.x;
          acc1[j] = rows.y;
          acc2[j] = rows.z;
          acc3[j] = rows.w;
        }
      }
    }
  }
