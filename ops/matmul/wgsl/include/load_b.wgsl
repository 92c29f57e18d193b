// Four consecutive columns of row k of b, from column col (a multiple of 4); zeros outside b.
fn load_b(k: u32, col: u32) -> vec4f {
  var v = vec4f(0.0);
  if (k < params.k && col < params.n) {
    let e = k * params.n + col;
    if (params.n % 4u == 0u) {
      v = b[e / 4u];
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (col + j < params.n) {
          v[j] = b[(e + j) / 4u][(e + j) % 4u];
        }
      }
    }
  }
  return v;
}
