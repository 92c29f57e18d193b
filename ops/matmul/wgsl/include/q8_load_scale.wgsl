// Row n's scale, or 0 outside the weight.
fn load_scale(n: u32) -> f32 {
  if (n < params.n) {
    return scales[n];
  }
  return 0.0;
}
