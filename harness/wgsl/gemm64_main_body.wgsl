// The body of main in the 64 x 64 tile (matmul/tile64, and gemm64_gathered.wgsl for stft and mel)
// after its setup, in three parts that matmul's other 64 x 64 kernels also take one by one: the
// eight accumulators (gemm64_acc.wgsl), the walk over K with b as [K, N] (gemm64_loop.wgsl) and the
// stores (gemm64_store.wgsl). Needs of main: row0, col0, tx, ty and the staging indices a_row, a_k,
// b_k, b_col and b_lane; of the kernel: params.k, STEP, LANES, HALF, a_t, b_s, stage_t
// (gemm_stage_t.wgsl), and load_a(row, k), load_b(k, col) and store_c(row, col, v), four
// consecutive values each, zeros (or nothing stored) outside the matrix.
// #include "gemm64_acc.wgsl"

// #include "gemm64_loop.wgsl"

// #include "gemm64_store.wgsl"
