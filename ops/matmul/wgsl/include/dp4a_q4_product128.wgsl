// The product of the 128 x 128 q4 dp4a tiles (q4g128_dp4a, q4g128_dp4a_fused), after
// dp4a_setup.wgsl: K walked into the i32 sums left0-7 and right0-7 (dp4a_multiply128.wgsl), each
// group's sums (two steps, or the last step of K) converted to f32, times the group's scales, added
// into the f32 sums acc0_left .. acc7_right (gemm_acc8x8.wgsl's names and layout: rows 4ty..4ty+3 and
// 64+4ty..64+4ty+3, columns 4tx..4tx+3 and 64+4tx..64+4tx+3 of the tile), and at the end those times
// the activation scale a_scales[m]: the finished outputs, which tile128_epilogue.wgsl and
// tile128_store.wgsl read. The group's scaling and the activation scale are dp4a_q4_group_scale128.wgsl
// and dp4a_q4_a_scale128.wgsl, which the pipelined tiles share. Needs dp4a_setup.wgsl's names,
// dp4a_tile128.wgsl, dp4a_ops.wgsl, dp4a_q4_loads.wgsl and the kernel's GROUP.
  let left_n = col0 + tx * 4u; // the first of the weight rows (output columns) of the left sums
  let right_n = left_n + 64u;
// #include "dp4a_sums128.wgsl"
// #include "gemm_acc8x8.wgsl"
  for (var k0w = 0u; k0w < words; k0w += STEP) {
// #include "dp4a_stage_a.wgsl"
    // STAGE_WORDS / 2 q4 words of the weight row, each widened to two words of four int8 codes.
    for (var j = 0u; j < STAGE_WORDS; j += 2u) {
      let codes = widen_q4(load_weight(col0 + stage_row, (k0w + stage_w + j) / 2u));
      let slot = (stage_w + j) * LANES + stage_row / 4u;
      w_t[slot][stage_row % 4u] = codes.x;
      w_t[slot + LANES][stage_row % 4u] = codes.y;
    }
// #include "dp4a_multiply128.wgsl"
    // The end of a group (every second step) or of K: its sums scaled into the f32 sums.
    if ((k0w + STEP) % (GROUP / 4u) == 0u || k0w + STEP >= words) {
      let g = k0w / (GROUP / 4u);
      let left_scales = load_group_scales(left_n, g);
      let right_scales = load_group_scales(right_n, g);
// #include "dp4a_q4_group_scale128.wgsl"
    }
  }

// #include "dp4a_q4_a_scale128.wgsl"
