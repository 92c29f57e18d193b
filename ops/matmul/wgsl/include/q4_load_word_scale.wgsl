// The word holding code k of weight row n (and its neighbours 8 * (k / 8) .. + 7), or 0 outside the
// weight.
fn load_word(n: u32, k: u32) -> u32 {
  if (n < params.n && k < params.k) {
    return weight[n * ((params.k + 7u) / 8u) + k / 8u];
  }
  return 0u;
}

// The scale of column k of weight row n (its group's, shared by columns 128 * (k / 128) .. + 127),
// or 0 outside the weight.
fn load_scale(n: u32, k: u32) -> f32 {
  if (n < params.n && k < params.k) {
    return scales[n * ((params.k + GROUP - 1u) / GROUP) + k / GROUP];
  }
  return 0.0;
}
