// The product of the pipelined 128 x 128 q4 dp4a tiles (q4g128_dp4a_pipelined,
// q4g128_dp4a_fused_pipelined), after dp4a_setup_pipelined.wgsl: dp4a_q4_product128.wgsl's product,
// sums and outputs, with K walked over two stages as dp4a_q8_product128_pipelined.wgsl walks it
// (q4g128_dp4a_pipelined.wgsl says what differs). Per step, the next step's eight words of a (two
// vec4u) and the four q4 words holding the weight's codes of them (one vec4u, widened to eight words
// of int8 codes only as they are stored to the other stage) are loaded into registers before this
// step's products; a step that ends a group (every second step, or the last of K) also loads the
// group's scales of its columns then, and after the products scales its sums into the f32 sums with
// dp4a_q4_group_scale128.wgsl, the single-stage tile's text at the same steps; the activation scale
// is applied at the end by dp4a_q4_a_scale128.wgsl. So the outputs are the single-stage tile's, bit
// for bit. Needs dp4a_setup_pipelined.wgsl's names, dp4a_tile128_pipelined.wgsl, dp4a_ops.wgsl,
// dp4a_q4_loads.wgsl and the kernel's GROUP.
  let left_n = col0 + tx * 4u; // the first of the weight rows (output columns) of the left sums
  let right_n = left_n + 64u;
// #include "dp4a_sums128.wgsl"
// #include "gemm_acc8x8.wgsl"
// #include "dp4a_interior_pipelined.wgsl"
  let q_words = (params.k + 7u) / 8u; // q4 words per weight row
  let w_at = w_row * q_words + stage_w / 2u; // the weight's index of this invocation's first q4 word at step 0

  // The eight words of a and the four q4 words of the weight of one step, all three loads issued
  // before any is used.
  var a_lo: vec4u;
  var a_hi: vec4u;
  var q4: vec4u;
  if (0u < k_fast) {
    a_lo = a_words4(a_at);
    a_hi = a_words4(a_at + 4u);
    q4 = weight_words4(w_at);
  } else {
    a_lo = load_a4(a_row, stage_w);
    a_hi = load_a4(a_row, stage_w + 4u);
    q4 = load_weight4(w_row, stage_w / 2u);
  }
  stage_a_in(0u, stage_row, stage_w, a_lo);
  stage_a_in(0u, stage_row, stage_w + 4u, a_hi);
  stage_w_in(0u, stage_row, stage_w, vec4u(widen_q4(q4.x), widen_q4(q4.y)));
  stage_w_in(0u, stage_row, stage_w + 4u, vec4u(widen_q4(q4.z), widen_q4(q4.w)));
  workgroupBarrier();

  var left_scales = vec4f(0.0); // the scales of the group a step ends, of columns left_n .. left_n + 3
  var right_scales = vec4f(0.0); // and of right_n .. right_n + 3
  for (var k0w = 0u; k0w < words; k0w += STEP) {
    let st = (k0w / STEP) % 2u;
    let k1 = k0w + STEP; // the next step, loaded during this one's products
    let group_end = k1 % (GROUP / 4u) == 0u || k1 >= words; // as dp4a_q4_product128.wgsl's test
    if (k1 < k_fast) {
      a_lo = a_words4(a_at + k1);
      a_hi = a_words4(a_at + k1 + 4u);
      q4 = weight_words4(w_at + k1 / 2u);
    } else if (k1 < words) {
      a_lo = load_a4(a_row, k1 + stage_w);
      a_hi = load_a4(a_row, k1 + stage_w + 4u);
      q4 = load_weight4(w_row, (k1 + stage_w) / 2u);
    }
    if (group_end) {
      let g = k0w / (GROUP / 4u);
      left_scales = load_group_scales(left_n, g);
      right_scales = load_group_scales(right_n, g);
    }
// #include "dp4a_k_steps128_pipelined.wgsl"
    // The next step into the other stage, which every invocation finished reading before the
    // previous step's barrier; this step's barrier makes it visible to all.
    if (k1 < words) {
      stage_a_in(1u - st, stage_row, stage_w, a_lo);
      stage_a_in(1u - st, stage_row, stage_w + 4u, a_hi);
      stage_w_in(1u - st, stage_row, stage_w, vec4u(widen_q4(q4.x), widen_q4(q4.y)));
      stage_w_in(1u - st, stage_row, stage_w + 4u, vec4u(widen_q4(q4.z), widen_q4(q4.w)));
    }
    // The end of a group or of K: its sums scaled into the f32 sums.
    if (group_end) {
// #include "dp4a_q4_group_scale128.wgsl"
    }
    workgroupBarrier();
  }

// #include "dp4a_q4_a_scale128.wgsl"
