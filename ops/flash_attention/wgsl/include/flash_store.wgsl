// Writes quad `dv` of query row `row` of the head whose row 0 is `base` (q_base_of), if both exist.
fn store(base: u32, row: u32, dv: u32, value: vec4f) {
  if (row < params.L && dv < params.dvq) {
    out[(base + row * params.q_step) * params.dvq + dv] = value;
  }
}
