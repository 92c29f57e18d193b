// The walk over K of q4g128_tile64 and q4g128_tile64_fused, after tile64_q_setup.wgsl: per step of
// 16, four nibbles of weight row col0 + stage_row and their group's scale, and the same four k of a's
// row row0 + stage_row, staged transposed (each code times its scale, rounded once to f32), then
// tile64_q_multiply.wgsl.
  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    let word = bitcast<i32>(load_word(col0 + stage_row, k0 + stage_k));
    let scale = load_scale(col0 + stage_row, k0 + stage_k);
    for (var j = 0u; j < 4u; j++) {
      let k = k0 + stage_k + j;
      a_t[stage_k + j][stage_row / 4u][stage_row % 4u] = load_a(row0 + stage_row, k);
      let code = f32(extractBits(word, 4u * (k % 8u), 4u));
      w_t[stage_k + j][stage_row / 4u][stage_row % 4u] = select(0.0, code * scale, k < params.k);
    }
// #include "tile64_q_multiply.wgsl"
  }
