// Codes k .. k + 3 of a q8 word as f32 (each byte sign-extended by shifting it to the top of an i32
// and back), with the padding past K as zeros. q8row and q8row_fused stage the weight through it.
fn decode(word: u32, k: u32) -> vec4f {
  let codes = vec4f((vec4i(bitcast<i32>(word)) << vec4u(24u, 16u, 8u, 0u)) >> vec4u(24u));
  return select(vec4f(0.0), codes, vec4u(k) + vec4u(0u, 1u, 2u, 3u) < vec4u(params.k));
}
