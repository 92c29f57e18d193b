// The body of main in the 64 x 64 tile (matmul/tile64, and gemm64_gathered.wgsl for stft and mel)
// after its setup: the eight accumulators, acc0-3 rows 4ty..4ty+3 and acc4-7 rows 32+4ty..32+4ty+3
// of the tile, columns 4tx..4tx+3 (one vec4 per row); the walk over K, 16 at a time (four loads,
// a's two rows staged transposed by stage_t, b's two vec4s as they are, a barrier, the k-steps of
// gemm64_k_steps.wgsl, a barrier); the stores. Needs of main: row0, col0, tx, ty and the staging
// indices a_row, a_k (four consecutive k of rows a_row and a_row + 32 of a), b_k, b_col and b_slot
// (one vec4 of rows b_k and b_k + 8 of b); of the kernel: params.k, STEP, LANES, HALF, a_t, b_s,
// stage_t (gemm_stage_t.wgsl), and load_a(row, k), load_b(k, col) and store_c(row, col, v), four
// consecutive values each, zeros (or nothing stored) outside the matrix.
  // The 8 x 4 outputs of this invocation, one vec4 per row: acc0-3 the top rows, acc4-7 the bottom ones.
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
  var acc4 = vec4f(0.0);
  var acc5 = vec4f(0.0);
  var acc6 = vec4f(0.0);
  var acc7 = vec4f(0.0);

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    // All four loads before any store, so that they are in flight together.
    let a_top = load_a(row0 + a_row, k0 + a_k);
    let a_bottom = load_a(row0 + a_row + 32u, k0 + a_k);
    let b_top = load_b(k0 + b_k, b_col);
    let b_bottom = load_b(k0 + b_k + 8u, b_col);
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 32u, a_k, a_bottom);
    b_s[b_slot] = b_top;
    b_s[b_slot + 8u * LANES] = b_bottom;
    workgroupBarrier();
// #include "gemm64_k_steps.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }

  let top_row = row0 + ty * 4u;
  let bottom_row = top_row + 32u;
  let col = col0 + tx * 4u;
  store_c(top_row, col, acc0);
  store_c(top_row + 1u, col, acc1);
  store_c(top_row + 2u, col, acc2);
  store_c(top_row + 3u, col, acc3);
  store_c(bottom_row, col, acc4);
  store_c(bottom_row + 1u, col, acc5);
  store_c(bottom_row + 2u, col, acc6);
  store_c(bottom_row + 3u, col, acc7);
