// The product of the 64 x 64 q4 dp4a tiles (q4g128_dp4a_tile64, q4g128_dp4a_tile64_fused), after
// dp4a_setup.wgsl: each step of 128 codes (one group) walked into the i32 sums isum0-7
// (dp4a_multiply64.wgsl), converted to f32, times the group's scales, added into the f32 sums acc0-7
// (gemm64_acc.wgsl's names and layout: rows 4ty..4ty+3 and 32+4ty..32+4ty+3, columns 4tx..4tx+3 of
// the tile), and at the end those times the activation scale a_scales[m]: the finished outputs, which
// tile64_epilogue.wgsl and gemm64_store.wgsl read. Needs dp4a_setup.wgsl's names, dp4a_tile64.wgsl,
// dp4a_ops.wgsl and dp4a_q4_loads.wgsl.
// #include "gemm64_acc.wgsl"
  let quad_n = col0 + tx * 4u; // the first of the weight rows (output columns) of the sums
  for (var k0w = 0u; k0w < words; k0w += STEP) {
// #include "dp4a_stage_a.wgsl"
    // Eight q4 words of the weight row, each widened to two words of four int8 codes.
    for (var j = 0u; j < STAGE_WORDS; j += 2u) {
      let codes = widen_q4(load_weight(col0 + stage_row, (k0w + stage_w + j) / 2u));
      let slot = (stage_w + j) * LANES + stage_row / 4u;
      w_t[slot][stage_row % 4u] = codes.x;
      w_t[slot + LANES][stage_row % 4u] = codes.y;
    }
    var isum0 = vec4i(0);
    var isum1 = vec4i(0);
    var isum2 = vec4i(0);
    var isum3 = vec4i(0);
    var isum4 = vec4i(0);
    var isum5 = vec4i(0);
    var isum6 = vec4i(0);
    var isum7 = vec4i(0);
// #include "dp4a_multiply64.wgsl"
    let g = k0w / STEP;
    let group_scales = load_group_scales(quad_n, g);
    acc0 += vec4f(isum0) * group_scales;
    acc1 += vec4f(isum1) * group_scales;
    acc2 += vec4f(isum2) * group_scales;
    acc3 += vec4f(isum3) * group_scales;
    acc4 += vec4f(isum4) * group_scales;
    acc5 += vec4f(isum5) * group_scales;
    acc6 += vec4f(isum6) * group_scales;
    acc7 += vec4f(isum7) * group_scales;
  }

  {
    let top = row0 + ty * 4u;
    let bottom = top + 32u;
    acc0 *= load_a_scale(top);
    acc1 *= load_a_scale(top + 1u);
    acc2 *= load_a_scale(top + 2u);
    acc3 *= load_a_scale(top + 3u);
    acc4 *= load_a_scale(bottom);
    acc5 *= load_a_scale(bottom + 1u);
    acc6 *= load_a_scale(bottom + 2u);
    acc7 *= load_a_scale(bottom + 3u);
  }
