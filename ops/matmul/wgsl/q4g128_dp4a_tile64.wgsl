// matmul/q4g128_dp4a_tile64: q4g128_dp4a's product (c = dequant(a) @ dequant(weight)^T, int8
// activations with a scale per row times a q4 group-128 weight; q4g128_dp4a.wgsl says the formats
// and the arithmetic) in q8row_dp4a_tile64's 64 x 64 tiles, whose step of 128 codes is one group:
// the group's i32 sums are scaled into the f32 sums at the end of every step.

// #include "params.wgsl"

// #include "dp4a_bindings.wgsl"

const GROUP = 128u; // columns per scale: one step of the walk (4 * STEP)

// #include "dp4a_tile64.wgsl"

// #include "dp4a_ops.wgsl"

// #include "store_c_scalar.wgsl"

// #include "dp4a_q4_loads.wgsl"

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup.wgsl"

  var sum0 = vec4f(0.0);
  var sum1 = vec4f(0.0);
  var sum2 = vec4f(0.0);
  var sum3 = vec4f(0.0);
  var sum4 = vec4f(0.0);
  var sum5 = vec4f(0.0);
  var sum6 = vec4f(0.0);
  var sum7 = vec4f(0.0);
  let col = col0 + tx * 4u;
  for (var k0w = 0u; k0w < words; k0w += STEP) {
// #include "dp4a_stage_a.wgsl"
    // Eight q4 words of the weight row, each widened to two words of four int8 codes.
    for (var j = 0u; j < STAGE_WORDS; j += 2u) {
      let q4 = vec4i(bitcast<i32>(load_weight(col0 + stage_row, (k0w + stage_w + j) / 2u)));
      let slot = (stage_w + j) * LANES + stage_row / 4u;
      w_t[slot][stage_row % 4u] = pack4xI8((q4 << vec4u(28u, 24u, 20u, 16u)) >> vec4u(28u));
      w_t[slot + LANES][stage_row % 4u] = pack4xI8((q4 << vec4u(12u, 8u, 4u, 0u)) >> vec4u(28u));
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
    let group_scales = load_group_scales(col, g);
    sum0 += vec4f(isum0) * group_scales;
    sum1 += vec4f(isum1) * group_scales;
    sum2 += vec4f(isum2) * group_scales;
    sum3 += vec4f(isum3) * group_scales;
    sum4 += vec4f(isum4) * group_scales;
    sum5 += vec4f(isum5) * group_scales;
    sum6 += vec4f(isum6) * group_scales;
    sum7 += vec4f(isum7) * group_scales;
  }

  let top = row0 + ty * 4u;
  let bottom = top + 32u;
  store_c(top, col, sum0 * load_a_scale(top));
  store_c(top + 1u, col, sum1 * load_a_scale(top + 1u));
  store_c(top + 2u, col, sum2 * load_a_scale(top + 2u));
  store_c(top + 3u, col, sum3 * load_a_scale(top + 3u));
  store_c(bottom, col, sum4 * load_a_scale(bottom));
  store_c(bottom + 1u, col, sum5 * load_a_scale(bottom + 1u));
  store_c(bottom + 2u, col, sum6 * load_a_scale(bottom + 2u));
  store_c(bottom + 3u, col, sum7 * load_a_scale(bottom + 3u));
}
