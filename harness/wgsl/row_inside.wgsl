// Which components of quad q belong to the row [begin, end) (the ragged paths of softmax, rmsnorm,
// layernorm and reduce, whose rows need not start on a vec4).
fn inside(q: u32, begin: u32, end: u32) -> vec4<bool> {
  let e = vec4u(4u * q) + vec4u(0u, 1u, 2u, 3u);
  return (e >= vec4u(begin)) & (e < vec4u(end));
}
