// Four consecutive k of row `row` of a (packed halves, a pair of words per vec2u), from column k (a
// multiple of 4), as f32; zeros outside a. When K % 4 == 0 the four halves are one aligned pair of
// words; otherwise each is read from its own word, element e of a being half e % 2 of word e / 2.
fn load_a(row: u32, k: u32) -> vec4f {
  var v = vec4f(0.0);
  if (row < params.m && k < params.k) {
    let e = row * params.k + k;
    if (params.k % 4u == 0u) {
      let w = a[e / 4u];
      v = vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (k + j < params.k) {
          let word = a[(e + j) / 4u][((e + j) / 2u) % 2u];
          v[j] = unpack2x16float(word)[(e + j) % 2u];
        }
      }
    }
  }
  return v;
}
