// The product of the pipelined 128 x 128 q8 dp4a tiles (q8row_dp4a_pipelined,
// q8row_dp4a_fused_pipelined), after dp4a_setup_pipelined.wgsl: dp4a_q8_product128.wgsl's product,
// sums and outputs, with K walked over two stages (q8row_dp4a_pipelined.wgsl says why). Step 0 is
// staged before the loop; then per step, the next step's eight words of a and of the weight (four
// vec4u) are loaded into registers, this step's products run from its stage
// (dp4a_k_steps128_pipelined.wgsl), the loaded words are stored to the other stage, and one barrier
// ends the step. The integer sums are the single-stage tile's, exactly, and dp4a_q8_scale128.wgsl
// scales them into the outputs with the same text: the same outputs, bit for bit. Needs
// dp4a_setup_pipelined.wgsl's names, dp4a_tile128_pipelined.wgsl, dp4a_ops.wgsl and
// dp4a_q8_loads.wgsl.
// #include "dp4a_sums128.wgsl"
// #include "dp4a_interior_pipelined.wgsl"
  let w_at = w_row * words + stage_w; // the weight's index of this invocation's first word at step 0

  // The eight words of a and of the weight of one step, all four loads issued before any is used.
  var a_lo: vec4u;
  var a_hi: vec4u;
  var w_lo: vec4u;
  var w_hi: vec4u;
  if (0u < k_fast) {
    a_lo = a_words4(a_at);
    a_hi = a_words4(a_at + 4u);
    w_lo = weight_words4(w_at);
    w_hi = weight_words4(w_at + 4u);
  } else {
    a_lo = load_a4(a_row, stage_w);
    a_hi = load_a4(a_row, stage_w + 4u);
    w_lo = load_weight4(w_row, stage_w);
    w_hi = load_weight4(w_row, stage_w + 4u);
  }
  stage_a_in(0u, stage_row, stage_w, a_lo);
  stage_a_in(0u, stage_row, stage_w + 4u, a_hi);
  stage_w_in(0u, stage_row, stage_w, w_lo);
  stage_w_in(0u, stage_row, stage_w + 4u, w_hi);
  workgroupBarrier();

  for (var k0w = 0u; k0w < words; k0w += STEP) {
    let st = (k0w / STEP) % 2u;
    let k1 = k0w + STEP; // the next step, loaded during this one's products
    if (k1 < k_fast) {
      a_lo = a_words4(a_at + k1);
      a_hi = a_words4(a_at + k1 + 4u);
      w_lo = weight_words4(w_at + k1);
      w_hi = weight_words4(w_at + k1 + 4u);
    } else if (k1 < words) {
      a_lo = load_a4(a_row, k1 + stage_w);
      a_hi = load_a4(a_row, k1 + stage_w + 4u);
      w_lo = load_weight4(w_row, k1 + stage_w);
      w_hi = load_weight4(w_row, k1 + stage_w + 4u);
    }
// #include "dp4a_k_steps128_pipelined.wgsl"
    // The next step into the other stage, which every invocation finished reading before the
    // previous step's barrier; this step's barrier makes it visible to all.
    if (k1 < words) {
      stage_a_in(1u - st, stage_row, stage_w, a_lo);
      stage_a_in(1u - st, stage_row, stage_w + 4u, a_hi);
      stage_w_in(1u - st, stage_row, stage_w, w_lo);
      stage_w_in(1u - st, stage_row, stage_w + 4u, w_hi);
    }
    workgroupBarrier();
  }

// #include "dp4a_q8_scale128.wgsl"
