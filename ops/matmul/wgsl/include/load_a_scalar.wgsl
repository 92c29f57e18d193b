// Element (row, k) of a (an array<f32>), or 0 outside a.
fn load_a(row: u32, k: u32) -> f32 {
  if (row < params.m && k < params.k) {
    return a[row * params.k + k];
  }
  return 0.0;
}

// The same, under the name q8_infinite_scale.wgsl reads it by.
fn a_at(row: u32, k: u32) -> f32 {
  return load_a(row, k);
}
