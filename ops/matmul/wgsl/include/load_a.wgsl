// Four consecutive k of row `row` of a, from column k (a multiple of 4); zeros outside a.
fn load_a(row: u32, k: u32) -> vec4f {
  var v = vec4f(0.0);
  if (row < params.m && k < params.k) {
    let e = row * params.k + k;
    if (params.k % 4u == 0u) {
      v = a[e / 4u];
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (k + j < params.k) {
          v[j] = a[(e + j) / 4u][(e + j) % 4u];
        }
      }
    }
  }
  return v;
}

// Element (row, k) of a, or 0 outside a (q8_infinite_scale.wgsl reads a element by element).
fn a_at(row: u32, k: u32) -> f32 {
  return load_a(row, k - k % 4u)[k % 4u];
}
