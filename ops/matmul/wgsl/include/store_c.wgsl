// Four consecutive columns of row `row` of c, from column col (a multiple of 4); those outside c
// are skipped.
fn store_c(row: u32, col: u32, v: vec4f) {
  if (row >= params.m || col >= params.n) {
    return;
  }
  let e = row * params.n + col;
  if (params.n % 4u == 0u) {
    c[e / 4u] = v;
    return;
  }
  for (var j = 0u; j < 4u; j++) {
    if (col + j < params.n) {
      c[(e + j) / 4u][(e + j) % 4u] = v[j];
    }
  }
}
