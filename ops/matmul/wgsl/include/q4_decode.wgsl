// Codes k .. k + 3 of a row (the low or the high half of its q4 word, k % 8 telling which) as f32
// (each nibble sign-extended by shifting it to the top of an i32 and back), times the group's scale,
// with the padding past K as zeros. q4g128 and q4g128_fused stage the weight through it.
fn decode(word: u32, k: u32, scale: f32) -> vec4f {
  let shifts = select(vec4u(28u, 24u, 20u, 16u), vec4u(12u, 8u, 4u, 0u), k % 8u == 4u);
  let codes = vec4f((vec4i(bitcast<i32>(word)) << shifts) >> vec4u(28u));
  return select(vec4f(0.0), codes * scale, vec4u(k) + vec4u(0u, 1u, 2u, 3u) < vec4u(params.k));
}
