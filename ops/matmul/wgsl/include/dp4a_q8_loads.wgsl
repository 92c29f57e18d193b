// The weight's loads of q8row_dp4a and q8row_dp4a_tile64 (ops/matvec's q8 format).

// Word w of weight row n, or 0 outside the weight.
fn load_weight(n: u32, w: u32) -> u32 {
  let words = (params.k + 3u) / 4u;
  if (n < params.n && w < words) {
    return weight[n * words + w];
  }
  return 0u;
}

// Row n's scale, or 0 outside the weight.
fn load_scale(n: u32) -> f32 {
  if (n < params.n) {
    return scales[n];
  }
  return 0.0;
}

// The scales of output columns col .. col + 3.
fn load_scales(col: u32) -> vec4f {
  return vec4f(load_scale(col), load_scale(col + 1u), load_scale(col + 2u), load_scale(col + 3u));
}
