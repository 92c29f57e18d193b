// Four consecutive columns of row `row` of c (an array<vec4f>) as they are before this dispatch
// writes them, from column col (a multiple of 4); zeros outside c. The fused epilogue's accumulate
// (epilogue.wgsl) reads them; store_c.wgsl's counterpart.
fn load_c(row: u32, col: u32) -> vec4f {
  var v = vec4f(0.0);
  if (row < params.m && col < params.n) {
    let e = row * params.n + col;
    if (params.n % 4u == 0u) {
      v = c[e / 4u];
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (col + j < params.n) {
          v[j] = c[(e + j) / 4u][(e + j) % 4u];
        }
      }
    }
  }
  return v;
}
