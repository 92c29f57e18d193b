// (cos a, sin a) for an f32 angle, reduced to [-pi, pi] first: WGSL promises sin and cos only
// inside that range (absolute error 2^-11 there), and a GPU's fast sine loses accuracy outside it.
// 2 pi is split into a head of 8 significant bits (6.28125) and the rest, so k * 6.28125 is exact
// for |k| < 2^16 (angles up to ~411,000) and a - k * 6.28125 is exact (the two are within a factor
// of 2 of each other); the remainder's own error is k * 2^-33.
fn turn(a: f32) -> vec2f {
  let k = round(a * 0.15915494309189535);
  let r = (a - k * 6.28125) - k * 0.0019353071795864769;
  return vec2f(cos(r), sin(r));
}

// Two adjacent pairs (x, y) and (z, w) turned by the angles whose (cos, sin) are c0 and c1.
fn rotate_pairs(v: vec4f, c0: vec2f, c1: vec2f) -> vec4f {
  return vec4f(v.x * c0.x - v.y * c0.y, v.x * c0.y + v.y * c0.x, v.z * c1.x - v.w * c1.y, v.z * c1.y + v.w * c1.x);
}
