// The input of the tree-reduced layouts (f32_wide, q4_tiled): `xin(i)`, vec4 i of x or, with NORM,
// of x * g; and `sum_squares(tid)`, this invocation's share of sum(x^2) over the vec4s tid, tid + 256,
// ...: with every invocation's share, the whole row's. Expects `x`, `g` (array<vec4f>), `p` and NORM.
fn xin(i: u32) -> vec4f {
  if (NORM) { return x[i] * g[i]; }
  return x[i];
}

// Sum of x^2 over the vec4s tid, tid + 256, ...: with every invocation's share, the whole row's.
fn sum_squares(tid: u32) -> f32 {
  var s = 0.0;
  for (var i = tid; i < p.k / 4u; i += 256u) { s += dot(x[i], x[i]); }
  return s;
}
