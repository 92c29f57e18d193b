// stage_t's counterpart for the decoded weight: four consecutive k of one weight row into the
// transposed stage of b_s at `base`.
fn stage_w(base: u32, row: u32, k: u32, v: vec4f) {
  let slot = base + k * LANES + row / 4u;
  b_s[slot][row % 4u] = v.x;
  b_s[slot + LANES][row % 4u] = v.y;
  b_s[slot + 2u * LANES][row % 4u] = v.z;
  b_s[slot + 3u * LANES][row % 4u] = v.w;
}
