// Word j of each of four rows (`words` words per row: ceil(K/4) for q8row, ceil(K/8) for q4g128).
fn words_at(rows: vec4u, words: u32, j: u32) -> vec4u {
  let e = rows * words + j;
  return vec4u(
    weight[e.x / 4u][e.x % 4u],
    weight[e.y / 4u][e.y % 4u],
    weight[e.z / 4u][e.z % 4u],
    weight[e.w / 4u][e.w % 4u],
  );
}
