// The unchecked loads of the interior blocks of kernel and kernel_fused (tile128_kn_loop.wgsl), f32
// operands: vec4 i of a and of b.
fn a_quad(i: u32) -> vec4f {
  return a[i];
}

fn b_quad(i: u32) -> vec4f {
  return b[i];
}
