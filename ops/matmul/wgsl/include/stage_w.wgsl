// stage_t's counterpart for a weight in a Linear layer's orientation [N, K] (q8row's and q4g128's
// decoded codes, linear's f32 rows): four consecutive k of one weight row into b_s, transposed the
// same way, so that the k-steps read it as they read b.
fn stage_w(row: u32, k: u32, v: vec4f) {
  let i = row / 4u;
  let c = row % 4u;
  b_s[k][i][c] = v.x;
  b_s[k + 1u][i][c] = v.y;
  b_s[k + 2u][i][c] = v.z;
  b_s[k + 3u][i][c] = v.w;
}
