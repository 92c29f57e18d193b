// The uniform, the pipeline constants and the output step every fused_gemv kernel shares. Expects the
// including kernel to bind `out: array<f32>` (read_write) and the uniform `p: P`.
// P: rows of the block (n), columns (k), the output's first element (out0: a row block's place in
// the whole output; for SwiGLU, in pairs), RMSNorm's epsilon.
struct P { n: u32, k: u32, out0: u32, eps: f32 }
// NORM: the product's input is RMSNorm(x) (true), or x as it is (false: `g` is bound but not read).
override NORM: bool = false;
// OUTPUT: 0 stores the result, 1 adds it to `out`, 2 applies SwiGLU to row pairs.
override OUTPUT: u32 = 0u;
// Rows r .. r + 3 of the block have the results y (r a multiple of 4): stored, added to `out` (the
// residual connection), or with SwiGLU, rows 2j and 2j + 1 being gate and up of FFN channel j.
fn put(r: u32, y: vec4f) {
  if (OUTPUT == 2u) {
    if (r < p.n) { out[p.out0 + r / 2u] = y.x / (1.0 + exp(-y.x)) * y.y; }
    if (r + 2u < p.n) { out[p.out0 + r / 2u + 1u] = y.z / (1.0 + exp(-y.z)) * y.w; }
    return;
  }
  for (var j = 0u; j < 4u; j++) {
    if (r + j < p.n) {
      if (OUTPUT == 1u) { out[p.out0 + r + j] += y[j]; } else { out[p.out0 + r + j] = y[j]; }
    }
  }
}
