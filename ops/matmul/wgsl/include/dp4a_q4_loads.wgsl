// The weight's loads of q4g128_dp4a and q4g128_dp4a_tile64 (ops/matvec's q4 group-128 format).
// Needs the kernel's GROUP.

// The q4 word holding codes 8q .. 8q + 7 of weight row n, or 0 outside the weight.
fn load_weight(n: u32, q: u32) -> u32 {
  let words = (params.k + 7u) / 8u;
  if (n < params.n && q < words) {
    return weight[n * words + q];
  }
  return 0u;
}

// Scale g of weight row n, or 0 outside the weight.
fn load_scale(n: u32, g: u32) -> f32 {
  let groups = (params.k + GROUP - 1u) / GROUP;
  if (n < params.n && g < groups) {
    return scales[n * groups + g];
  }
  return 0.0;
}

// Scale g of output columns col .. col + 3.
fn load_group_scales(col: u32, g: u32) -> vec4f {
  return vec4f(load_scale(col, g), load_scale(col + 1u, g), load_scale(col + 2u, g), load_scale(col + 3u, g));
}
