// The 64 x 64 q8 tile's accumulators (sums of a times the codes) times their columns' scales, in
// place: columns 4tx..4tx+3 of the tile at col0.
  {
    let col_scales = load_scales(col0 + tx * 4u);
    acc0 *= col_scales;
    acc1 *= col_scales;
    acc2 *= col_scales;
    acc3 *= col_scales;
  }
