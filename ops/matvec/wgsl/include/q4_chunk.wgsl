// The dot product of a vec4<u32> of 32 int4 codes (decoded as in q4_magic.wgsl) with their 32
// activations x0..x7, four each in order: half words q.x, q.x >> 16, q.y, ... against x0, x1, x2, ...
// Summed in a vec4 of FMAs, then pairwise. Used by q4g128.nvidia and q4g128_rows64, once per row and
// vec4<u32>, before the group's scale multiplies it.
fn chunk_dot(q: vec4u, x0: vec4f, x1: vec4f, x2: vec4f, x3: vec4f, x4: vec4f, x5: vec4f, x6: vec4f, x7: vec4f) -> f32 {
  var v = (bitcast<vec4f>((vec4u(q.x) & MASK) ^ MAGIC) - BIAS) * x0;
  v = fma((bitcast<vec4f>((vec4u(q.x >> 16u) & MASK) ^ MAGIC) - BIAS), x1, v);
  v = fma((bitcast<vec4f>((vec4u(q.y) & MASK) ^ MAGIC) - BIAS), x2, v);
  v = fma((bitcast<vec4f>((vec4u(q.y >> 16u) & MASK) ^ MAGIC) - BIAS), x3, v);
  v = fma((bitcast<vec4f>((vec4u(q.z) & MASK) ^ MAGIC) - BIAS), x4, v);
  v = fma((bitcast<vec4f>((vec4u(q.z >> 16u) & MASK) ^ MAGIC) - BIAS), x5, v);
  v = fma((bitcast<vec4f>((vec4u(q.w) & MASK) ^ MAGIC) - BIAS), x6, v);
  v = fma((bitcast<vec4f>((vec4u(q.w >> 16u) & MASK) ^ MAGIC) - BIAS), x7, v);
  return (v.x + v.y) + (v.z + v.w);
}
