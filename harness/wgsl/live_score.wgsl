// Whether attention scores are live. A dead score (a key masked by -inf, hidden by `causal`, or past
// the end) is written as LOWEST, the lowest finite f32, or is -inf, and weighs exactly 0. The test
// reads the bits: a NaN score is live (it makes its row NaN, as torch's softmax does), where
// `s > LOWEST` is false for a NaN and would drop it, and a compiler may fold float tests for NaN away.
fn live(s: f32) -> bool {
  let bits = bitcast<u32>(s);
  return bits != 0xff7fffffu && bits != 0xff800000u;
}

fn live4(s: vec4f) -> vec4<bool> {
  let bits = bitcast<vec4u>(s);
  return (bits != vec4u(0xff7fffffu)) & (bits != vec4u(0xff800000u));
}

// Whether a partial softmax sum (of a split of the keys) counts: it is 0 for a split with no live key,
// and NaN for one whose scores made its row NaN, which must reach the combined row (`sum > 0.0` is
// false for NaN). From the bits: a sum of non-negative terms is +0 or positive, or NaN.
fn has_live_keys(sum: f32) -> bool {
  return bitcast<u32>(sum) != 0u;
}
