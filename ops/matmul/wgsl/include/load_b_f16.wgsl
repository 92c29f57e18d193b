// Four consecutive columns of row k of b (packed halves, a pair of words per vec2u), from column col
// (a multiple of 4), as f32; zeros outside b. When N % 4 == 0 the four halves are one aligned pair
// of words; otherwise each is read from its own word, element e of b being half e % 2 of word e / 2.
fn load_b(k: u32, col: u32) -> vec4f {
  var v = vec4f(0.0);
  if (k < params.k && col < params.n) {
    let e = k * params.n + col;
    if (params.n % 4u == 0u) {
      let w = b[e / 4u];
      v = vec4f(unpack2x16float(w.x), unpack2x16float(w.y));
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (col + j < params.n) {
          let word = b[(e + j) / 4u][((e + j) / 2u) % 2u];
          v[j] = unpack2x16float(word)[(e + j) % 2u];
        }
      }
    }
  }
  return v;
}
