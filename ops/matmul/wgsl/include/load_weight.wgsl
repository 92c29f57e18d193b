// Four consecutive k of row n of an f32 Linear weight [N, K] (an array<vec4f>), from column k (a
// multiple of 4); zeros outside the weight. load_a.wgsl's counterpart for the weight's rows.
fn load_weight(n: u32, k: u32) -> vec4f {
  var v = vec4f(0.0);
  if (n < params.n && k < params.k) {
    let e = n * params.k + k;
    if (params.k % 4u == 0u) {
      v = weight[e / 4u];
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (k + j < params.k) {
          v[j] = weight[(e + j) / 4u][(e + j) % 4u];
        }
      }
    }
  }
  return v;
}
