// The accumulators of the 64 x 64 tile (gemm64_main_body.wgsl, and matmul's tile64 kernels that
// take its parts apart), function-local variables of main: the 8 x 4 outputs of an invocation, one
// vec4 per row, acc0-3 rows 4ty..4ty+3 and acc4-7 rows 32+4ty..32+4ty+3 of the tile, columns
// 4tx..4tx+3. gemm64_k_steps.wgsl adds into them and gemm64_store.wgsl stores them.
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
  var acc4 = vec4f(0.0);
  var acc5 = vec4f(0.0);
  var acc6 = vec4f(0.0);
  var acc7 = vec4f(0.0);
