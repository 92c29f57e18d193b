// The rest of one block of K in conv's and conv_transpose's implicit GEMMs, once the kernel has
// staged the block's weight values into a_t: this invocation's input values go into b_s (column
// b_col of the tile, rows b_row + i * B_ROW_STEP), then a barrier, the block's k-steps
// (gemm8_k_steps.wgsl) and a barrier. The first four values v0..v3 were loaded by the kernel before
// it staged the weight, so that those loads are in flight together; the wide tile (B_PER == 8)
// loads its other four here through load_x(at, ci + i * B_ROW_STEP, inside). Needs b_row, b_col,
// v0..v3, at, ci and inside in scope, and the kernel's a_t, b_s, LANES_*, HALF_*, B_ROW_STEP,
// B_PER and load_x.
      let slot = b_row * LANES_N + b_col / 4u;
      let lane = b_col % 4u;
      b_s[slot][lane] = v0;
      b_s[slot + B_ROW_STEP * LANES_N][lane] = v1;
      b_s[slot + 2u * B_ROW_STEP * LANES_N][lane] = v2;
      b_s[slot + 3u * B_ROW_STEP * LANES_N][lane] = v3;
      if (B_PER == 8u) {
        // A constant condition: the wide tile stages 8 values per invocation, the square one 4.
        let v4 = load_x(at, ci + 4u * B_ROW_STEP, inside);
        let v5 = load_x(at, ci + 5u * B_ROW_STEP, inside);
        let v6 = load_x(at, ci + 6u * B_ROW_STEP, inside);
        let v7 = load_x(at, ci + 7u * B_ROW_STEP, inside);
        b_s[slot + 4u * B_ROW_STEP * LANES_N][lane] = v4;
        b_s[slot + 5u * B_ROW_STEP * LANES_N][lane] = v5;
        b_s[slot + 6u * B_ROW_STEP * LANES_N][lane] = v6;
        b_s[slot + 7u * B_ROW_STEP * LANES_N][lane] = v7;
      }
      workgroupBarrier();
// #include "gemm8_k_steps.wgsl"
      // The next block's stores wait until every invocation has read this one.
      workgroupBarrier();
