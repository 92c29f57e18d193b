// stage_t's counterpart for a weight in a Linear layer's orientation [N, K] (q8row's and q4g128's
// decoded codes, linear's f32 rows): four consecutive k of one weight row into b_s, transposed the
// same way, so that the k-steps read it as they read b.
fn stage_w(row: u32, k: u32, v: vec4f) {
  let slot = k * LANES + row / 4u;
  b_s[slot][row % 4u] = v.x;
  b_s[slot + LANES][row % 4u] = v.y;
  b_s[slot + 2u * LANES][row % 4u] = v.z;
  b_s[slot + 3u * LANES][row % 4u] = v.w;
}
