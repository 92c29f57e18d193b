// The product of the 64 x 64 q8 dp4a tiles (q8row_dp4a_tile64, q8row_dp4a_tile64_fused), after
// dp4a_setup.wgsl: K walked into the i32 sums isum0-7 (dp4a_multiply64.wgsl), then each converted to
// f32 and scaled, (f32(sum) * a_scales[m]) * scales[n], into the finished outputs acc0-7, in
// gemm64_acc.wgsl's names and layout (rows 4ty..4ty+3 and 32+4ty..32+4ty+3, columns 4tx..4tx+3 of
// the tile), which tile64_epilogue.wgsl and gemm64_store.wgsl read. Needs dp4a_setup.wgsl's names,
// dp4a_tile64.wgsl, dp4a_ops.wgsl and dp4a_q8_loads.wgsl.
  var isum0 = vec4i(0);
  var isum1 = vec4i(0);
  var isum2 = vec4i(0);
  var isum3 = vec4i(0);
  var isum4 = vec4i(0);
  var isum5 = vec4i(0);
  var isum6 = vec4i(0);
  var isum7 = vec4i(0);
  for (var k0w = 0u; k0w < words; k0w += STEP) {
// #include "dp4a_stage_a.wgsl"
    for (var j = 0u; j < STAGE_WORDS; j++) {
      let slot = (stage_w + j) * LANES + stage_row / 4u;
      w_t[slot][stage_row % 4u] = load_weight(col0 + stage_row, k0w + stage_w + j);
    }
// #include "dp4a_multiply64.wgsl"
  }

  let top = row0 + ty * 4u;
  let bottom = top + 32u;
  let col_scales = load_scales(col0 + tx * 4u);
  var acc0 = vec4f(isum0) * load_a_scale(top) * col_scales;
  var acc1 = vec4f(isum1) * load_a_scale(top + 1u) * col_scales;
  var acc2 = vec4f(isum2) * load_a_scale(top + 2u) * col_scales;
  var acc3 = vec4f(isum3) * load_a_scale(top + 3u) * col_scales;
  var acc4 = vec4f(isum4) * load_a_scale(bottom) * col_scales;
  var acc5 = vec4f(isum5) * load_a_scale(bottom + 1u) * col_scales;
  var acc6 = vec4f(isum6) * load_a_scale(bottom + 2u) * col_scales;
  var acc7 = vec4f(isum7) * load_a_scale(bottom + 3u) * col_scales;
