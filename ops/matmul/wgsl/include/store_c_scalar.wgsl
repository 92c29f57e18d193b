// Four consecutive columns of row `row` of c (an array<f32>), from column col; those outside c are
// skipped.
fn store_c(row: u32, col: u32, v: vec4f) {
  if (row >= params.m) {
    return;
  }
  for (var j = 0u; j < 4u; j++) {
    if (col + j < params.n) {
      c[row * params.n + col + j] = v[j];
    }
  }
}
