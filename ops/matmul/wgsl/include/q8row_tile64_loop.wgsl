// The walk over K of q8row_tile64 and q8row_tile64_fused, after tile64_q_setup.wgsl: per step of 16,
// one word of the weight (four codes of row col0 + stage_row) and the same four k of a's row
// row0 + stage_row, staged transposed, then tile64_q_multiply.wgsl. The sums are of a times the
// codes; tile64_q8_scale.wgsl applies the scales.
  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    let word = bitcast<i32>(load_word(col0 + stage_row, k0 + stage_k));
    for (var j = 0u; j < 4u; j++) {
      let k = k0 + stage_k + j;
      a_t[stage_k + j][stage_row / 4u][stage_row % 4u] = load_a(row0 + stage_row, k);
      w_t[stage_k + j][stage_row / 4u][stage_row % 4u] = select(0.0, f32(extractBits(word, 8u * j, 8u)), k < params.k);
    }
// #include "tile64_q_multiply.wgsl"
  }
