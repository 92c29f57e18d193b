// One key's share of the output phase (flash_add_pv.wgsl, gemm_fma8x8.wgsl) for a key that some of this
// invocation's rows do not see (a causal tile's diagonal): a row that does not see it keeps its
// accumulators, as the reference leaves a hidden key out, where its probability 0 times a NaN or
// infinite v would make the row NaN. Needs the key's probabilities `top` (rows 4ty..4ty+3) and `bottom`
// (half a tile lower), its v quads `left` and `right`, and `seen_top` and `seen_bottom` (sees()).
      acc0_left = select(acc0_left, fma(vec4f(top.x), left, acc0_left), seen_top.x);
      acc0_right = select(acc0_right, fma(vec4f(top.x), right, acc0_right), seen_top.x);
      acc1_left = select(acc1_left, fma(vec4f(top.y), left, acc1_left), seen_top.y);
      acc1_right = select(acc1_right, fma(vec4f(top.y), right, acc1_right), seen_top.y);
      acc2_left = select(acc2_left, fma(vec4f(top.z), left, acc2_left), seen_top.z);
      acc2_right = select(acc2_right, fma(vec4f(top.z), right, acc2_right), seen_top.z);
      acc3_left = select(acc3_left, fma(vec4f(top.w), left, acc3_left), seen_top.w);
      acc3_right = select(acc3_right, fma(vec4f(top.w), right, acc3_right), seen_top.w);
      acc4_left = select(acc4_left, fma(vec4f(bottom.x), left, acc4_left), seen_bottom.x);
      acc4_right = select(acc4_right, fma(vec4f(bottom.x), right, acc4_right), seen_bottom.x);
      acc5_left = select(acc5_left, fma(vec4f(bottom.y), left, acc5_left), seen_bottom.y);
      acc5_right = select(acc5_right, fma(vec4f(bottom.y), right, acc5_right), seen_bottom.y);
      acc6_left = select(acc6_left, fma(vec4f(bottom.z), left, acc6_left), seen_bottom.z);
      acc6_right = select(acc6_right, fma(vec4f(bottom.z), right, acc6_right), seen_bottom.z);
      acc7_left = select(acc7_left, fma(vec4f(bottom.w), left, acc7_left), seen_bottom.w);
      acc7_right = select(acc7_right, fma(vec4f(bottom.w), right, acc7_right), seen_bottom.w);
