// Four consecutive columns of row `row` of c (an array<f32>) as they are before this dispatch writes
// them, from column col; zeros outside c. The fused epilogue's accumulate (epilogue.wgsl) reads them;
// store_c_scalar.wgsl's counterpart.
fn load_c(row: u32, col: u32) -> vec4f {
  var v = vec4f(0.0);
  if (row < params.m) {
    for (var j = 0u; j < 4u; j++) {
      if (col + j < params.n) {
        v[j] = c[row * params.n + col + j];
      }
    }
  }
  return v;
}
