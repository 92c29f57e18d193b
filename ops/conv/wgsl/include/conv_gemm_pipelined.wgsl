// conv_gemm.wgsl's implicit GEMM with another walk over K, for conv/tile64_pipelined: the same setup
// (conv_setup.wgsl), gathered loads and stores (conv_io.wgsl), accumulators and k-steps, so every
// output is the same f32 sum in the same order, over two stages of workgroup memory instead of one.
// conv_gemm.wgsl stages a block (STEP = 8 input channels at one kernel position), waits for it,
// runs its k-steps and waits again, so each block's global loads wait out the memory latency with
// no arithmetic of this workgroup to hide them. Here the blocks alternate between stages 0 and 1:
// iteration blk issues block blk's loads into registers, runs block blk - 1's k-steps from the
// other stage (k_steps8_pipelined.wgsl), stores the registers to block blk's stage and ends with
// one barrier. The stage it stores to was last read by block blk - 2's k-steps, which every
// invocation finished before the previous iteration's barrier. Iteration 0 only loads and stores,
// the last (blk = blocks) only multiplies.
//
// Written for tile64's geometry: B_PER = 8 input values (rows b_row + i * B_ROW_STEP of column b_col)
// and A_PER = 2 weight values (block rows a_k and a_k + A_ROW_STEP of row a_row) per invocation per
// block, held in v0..v7 and wt0, wt1 across the k-steps. Needs the tile's constants and
// conv_bindings.wgsl.

// a_t[s][k * LANES_M + i] holds weight rows row0 + 4i .. 4i + 3 at block row k of the block in stage
// s (transposed); b_s[s][k * LANES_N + j] holds columns col0 + 4j .. 4j + 3 of its im2col row k.
// Block blk is in stage blk % 2.
var<workgroup> a_t: array<array<vec4f, STEP * LANES_M>, 2>;
var<workgroup> b_s: array<array<vec4f, STEP * LANES_N>, 2>;

// #include "conv_io.wgsl"

// The weight of input channel ci (of the group) for the row and kernel position at `at` (the row's
// w_base plus the position), or 0 past the group's channels or for a row past them (ok false).
fn load_w(at: u32, ci: u32, ok: bool) -> f32 {
  if (ok && ci < params.cin_g) {
    return weight[at + ci * params.kvol];
  }
  return 0.0;
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "conv_setup.wgsl"

// #include "gemm_acc8x8.wgsl"

  // Where this invocation stores its values in a stage.
  let slot = b_row * LANES_N + b_col / 4u;
  let lane = b_col % 4u;
  let a_slot = a_k * LANES_M + a_row / 4u;
  let a_lane = a_row % 4u;

  // The values of the block being loaded, in registers from before the previous block's k-steps
  // until after them.
  var v0 = 0.0;
  var v1 = 0.0;
  var v2 = 0.0;
  var v3 = 0.0;
  var v4 = 0.0;
  var v5 = 0.0;
  var v6 = 0.0;
  var v7 = 0.0;
  var wt0 = 0.0;
  var wt1 = 0.0;
  // The block to load next: its first input channel and its kernel position, conv_gemm.wgsl's two
  // loops (channel blocks outer, kernel positions inner, kw fastest) as one walk.
  var ci0 = 0u;
  var kpos = 0u;
  var kd = 0u;
  var kh = 0u;
  var kw = 0u;
  let blocks = (params.cin_g + STEP - 1u) / STEP * params.kvol;

  for (var blk = 0u; blk <= blocks; blk++) {
    if (blk < blocks) {
      // Block blk's loads, all issued before the k-steps below.
      let id = d0 + i32(kd * params.dil_d);
      let ih = h0 + i32(kh * params.dil_h);
      let iw = w0 + i32(kw * params.dil_w);
      let inside = col_ok && id >= 0 && id < i32(params.in_d) && ih >= 0 && ih < i32(params.in_h) && iw >= 0 &&
        iw < i32(params.in_w);
      let at = select(0u, x_base + u32(id) * params.in_hw + u32(ih) * params.in_w + u32(iw), inside);
      let ci = ci0 + b_row;
      v0 = load_x(at, ci, inside);
      v1 = load_x(at, ci + B_ROW_STEP, inside);
      v2 = load_x(at, ci + 2u * B_ROW_STEP, inside);
      v3 = load_x(at, ci + 3u * B_ROW_STEP, inside);
      v4 = load_x(at, ci + 4u * B_ROW_STEP, inside);
      v5 = load_x(at, ci + 5u * B_ROW_STEP, inside);
      v6 = load_x(at, ci + 6u * B_ROW_STEP, inside);
      v7 = load_x(at, ci + 7u * B_ROW_STEP, inside);
      wt0 = load_w(w_base + kpos, ci0 + a_k, a_ok);
      wt1 = load_w(w_base + kpos, ci0 + a_k + A_ROW_STEP, a_ok);
      kpos += 1u;
      kw += 1u;
      if (kw == params.k_w) {
        kw = 0u;
        kh += 1u;
        if (kh == params.k_h) {
          kh = 0u;
          kd += 1u;
        }
      }
      if (kpos == params.kvol) {
        kpos = 0u;
        kd = 0u;
        ci0 += STEP;
      }
    }
    if (blk > 0u) {
      // Block blk - 1's k-steps, from the stage the previous iteration's barrier made visible.
      let st = (blk - 1u) % 2u;
// #include "k_steps8_pipelined.wgsl"
    }
    if (blk < blocks) {
      // Block blk into its stage.
      let s = blk % 2u;
      b_s[s][slot][lane] = v0;
      b_s[s][slot + B_ROW_STEP * LANES_N][lane] = v1;
      b_s[s][slot + 2u * B_ROW_STEP * LANES_N][lane] = v2;
      b_s[s][slot + 3u * B_ROW_STEP * LANES_N][lane] = v3;
      b_s[s][slot + 4u * B_ROW_STEP * LANES_N][lane] = v4;
      b_s[s][slot + 5u * B_ROW_STEP * LANES_N][lane] = v5;
      b_s[s][slot + 6u * B_ROW_STEP * LANES_N][lane] = v6;
      b_s[s][slot + 7u * B_ROW_STEP * LANES_N][lane] = v7;
      a_t[s][a_slot][a_lane] = wt0;
      a_t[s][a_slot + A_ROW_STEP * LANES_M][a_lane] = wt1;
    }
    workgroupBarrier();
  }

// #include "gemm8_store_acc.wgsl"
}
