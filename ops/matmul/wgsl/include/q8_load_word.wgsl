// The word holding codes k .. k + 3 of weight row n (k a multiple of 4), or 0 outside the weight.
fn load_word(n: u32, k: u32) -> u32 {
  if (n < params.n && k < params.k) {
    return weight[n * ((params.k + 3u) / 4u) + k / 4u];
  }
  return 0u;
}
