// The workgroup's partial sums (LANES per row), and one masked vec4 of a row's dot product.
var<workgroup> partial: array<f32, LANES * ROWS>;

// acc plus column quad i of the row starting at quad `base` times x's, or acc when i is past the row
// (whose load then reads the row's last quad again, so that no load needs a branch around it).
fn quad(acc: vec4f, base: u32, i: u32, quads: u32) -> vec4f {
  let j = min(i, quads - 1u);
  return select(acc, fma(weight[base + j], x[j], acc), i < quads);
}
