// The unchecked loads of the 128 tile's interior blocks (tile128.wgsl), packed-half operands: the
// four halves of pair of words i of a and of b, as f32.
fn a_quad(i: u32) -> vec4f {
  let w = a[i];
  return vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
}

fn b_quad(i: u32) -> vec4f {
  let w = b[i];
  return vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
}
