// Writes quad `dv` of output row `row` (of the head whose rows start at `base`), if both exist.
fn store(base: u32, row: u32, dv: u32, value: vec4f) {
  if (row < params.L && dv < params.dvq) {
    out[(base + row) * params.dvq + dv] = value;
  }
}
