// The weight's loads of q4g128_dp4a, q4g128_dp4a_tile64 and q4g128_dp4a_pipelined (ops/matvec's q4
// group-128 format), and the widening of a q4 word into int8 codes as they stage it. Needs the
// kernel's GROUP.

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

// The eight codes of q4 word `word` as two words of four int8 codes each (pack4xI8 of the
// sign-extended nibbles): codes 0..3 in x, codes 4..7 in y.
fn widen_q4(word: u32) -> vec2u {
  let q4 = vec4i(bitcast<i32>(word));
  return vec2u(
    pack4xI8((q4 << vec4u(28u, 24u, 20u, 16u)) >> vec4u(28u)),
    pack4xI8((q4 << vec4u(12u, 8u, 4u, 0u)) >> vec4u(28u)),
  );
}
