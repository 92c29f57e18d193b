// The interior path of the pipelined 128 x 128 dp4a tiles' walks over K (dp4a_q8_product128_pipelined.wgsl,
// dp4a_q4_product128_pipelined.wgsl): a tile wholly inside c loads the steps whose 16 words lie
// inside K with all four codes valid (the steps before k_fast) unchecked, at indices computed once
// here; every other step (K's tail, and each step of an edge tile) goes through the checked load_a
// and load_weight, which stage zeros outside the operands and mask a's codes past K, as the
// single-stage tiles load every step. The choice is the same for every invocation of a workgroup.
// Needs dp4a_setup_pipelined.wgsl's names.
  let interior = row0 + TILE <= params.m && col0 + TILE <= params.n;
  let full_words = params.k / 4u; // words of a row of a whose four codes are all inside K
  let k_fast = select(0u, full_words - full_words % STEP, interior);
  let a_row = row0 + stage_row; // the row of a this invocation loads
  let w_row = col0 + stage_row; // the weight row (output column) it loads
  let a_at = a_row * words + stage_w; // a's index of its first word at step 0
