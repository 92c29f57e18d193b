// The functions and derived constants of conv's implicit-GEMM tiles (conv_gemm.wgsl and
// conv_gemm_pipelined.wgsl): how an invocation's staging steps through a block, the gathered load of
// one input value, and the store of four outputs with the bias. Needs the tile's constants and
// conv_bindings.wgsl.
const B_ROW_STEP = 256u / TILE_N; // rows between an invocation's input values in the block
const A_ROW_STEP = 256u / TILE_M; // rows between an invocation's weight values in the block
const B_PER = STEP * TILE_N / 256u; // input values staged per invocation per block: 4 or 8

// Input channel ci (of the group) at element `at` of channel 0, or 0 outside the input.
fn load_x(at: u32, ci: u32, inside: bool) -> f32 {
  if (inside && ci < params.cin_g) {
    return x[at + ci * params.in_sp];
  }
  return 0.0;
}

// Writes output channel `co` of group g (co within the group) at columns col .. col + 3, plus the
// bias; columns past the end and channels past the group are skipped.
fn store_quad(g: u32, co: u32, col: u32, v: vec4f) {
  if (co >= params.cout_g || col >= params.cols) {
    return;
  }
  let channel = g * params.cout_g + co;
  let shifted = v + select(0.0, bias[min(channel, arrayLength(&bias) - 1u)], params.has_bias != 0u);
  if (params.out_sp % 4u == 0u) {
    // col % 4 == 0 and out_sp % 4 == 0: the four columns are one sample's, on one aligned quad.
    let n = col / params.out_sp;
    out[((n * params.cout + channel) * params.out_sp + col % params.out_sp) / 4u] = shifted;
    return;
  }
  for (var j = 0u; j < 4u; j++) {
    let c = col + j;
    if (c < params.cols) {
      let e = (c / params.out_sp * params.cout + channel) * params.out_sp + c % params.out_sp;
      out[e / 4u][e % 4u] = shifted[j];
    }
  }
}
