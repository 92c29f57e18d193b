// The unchecked loads of the 128 tile's interior blocks (tile128.wgsl), f32 operands: vec4 i of a
// and of b.
fn a_quad(i: u32) -> vec4f {
  return a[i];
}

fn b_quad(i: u32) -> vec4f {
  return b[i];
}
