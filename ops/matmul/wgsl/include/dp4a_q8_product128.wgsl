// The product of the 128 x 128 q8 dp4a tiles (q8row_dp4a, q8row_dp4a_fused), after dp4a_setup.wgsl:
// K walked into the i32 sums left0-7 and right0-7 (dp4a_sums128.wgsl, dp4a_multiply128.wgsl), then
// each converted to f32 and scaled, (f32(sum) * a_scales[m]) * scales[n], into the finished outputs
// acc0_left .. acc7_right (dp4a_q8_scale128.wgsl, which the pipelined tiles share), in
// gemm_acc8x8.wgsl's names and layout (rows 4ty..4ty+3 and 64+4ty..64+4ty+3, columns 4tx..4tx+3 and
// 64+4tx..64+4tx+3 of the tile), which tile128_epilogue.wgsl and tile128_store.wgsl read. Needs
// dp4a_setup.wgsl's names, dp4a_tile128.wgsl, dp4a_ops.wgsl and dp4a_q8_loads.wgsl.
// #include "dp4a_sums128.wgsl"
  for (var k0w = 0u; k0w < words; k0w += STEP) {
// #include "dp4a_stage_a.wgsl"
    for (var j = 0u; j < STAGE_WORDS; j++) {
      let slot = (stage_w + j) * LANES + stage_row / 4u;
      w_t[slot][stage_row % 4u] = load_weight(col0 + stage_row, k0w + stage_w + j);
    }
// #include "dp4a_multiply128.wgsl"
  }

// #include "dp4a_q8_scale128.wgsl"
