// The adaLN modulation of rmsnorm/modulated and layernorm/modulated: y * (1 + scale[b, c]) +
// shift[b, c], b = row / params.rows_per_item (integer division), scale and shift [items, d] (shift
// read only when params.has_shift != 0). The two hooks the row kernels' bodies call on every value
// they store. Expects the bindings scale and shift (array<vec4f>) and params.d, params.rows_per_item
// and params.has_shift.

// Quad j of row `row`, d % 4 == 0: the rows of scale and shift line up with x's quads.
fn modulate_quad(row: u32, j: u32, y: vec4f) -> vec4f {
  let m = (row / params.rows_per_item) * (params.d / 4u) + j;
  var z = y * (1.0 + scale[m]);
  if (params.has_shift != 0u) {
    z += shift[m];
  }
  return z;
}

// Quad q of x's binding, whose components in `mask` belong to the row that starts at element
// `begin` (d % 4 != 0): scale and shift are read per component, at the same column of the item's
// row (u32 arithmetic wraps, so i + k is exact for the components in the row).
fn modulate_elements(begin: u32, q: u32, mask: vec4<bool>, y: vec4f) -> vec4f {
  let i = (begin / params.d / params.rows_per_item) * params.d + 4u * q - begin;
  var s = vec4f(0.0);
  var h = vec4f(0.0);
  if (mask.x) {
    s.x = scale[i / 4u][i % 4u];
  }
  if (mask.y) {
    s.y = scale[(i + 1u) / 4u][(i + 1u) % 4u];
  }
  if (mask.z) {
    s.z = scale[(i + 2u) / 4u][(i + 2u) % 4u];
  }
  if (mask.w) {
    s.w = scale[(i + 3u) / 4u][(i + 3u) % 4u];
  }
  if (params.has_shift != 0u) {
    if (mask.x) {
      h.x = shift[i / 4u][i % 4u];
    }
    if (mask.y) {
      h.y = shift[(i + 1u) / 4u][(i + 1u) % 4u];
    }
    if (mask.z) {
      h.z = shift[(i + 2u) / 4u][(i + 2u) % 4u];
    }
    if (mask.w) {
      h.w = shift[(i + 3u) / 4u][(i + 3u) % 4u];
    }
  }
  return y * (1.0 + s) + h;
}
