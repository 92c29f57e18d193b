// Element (row, k) of a (an array<f32>), or 0 outside a.
fn load_a(row: u32, k: u32) -> f32 {
  if (row < params.m && k < params.k) {
    return a[row * params.k + k];
  }
  return 0.0;
}
