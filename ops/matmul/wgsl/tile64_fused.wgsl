// matmul/tile64_fused: matmul/tile64 (c = a @ b, a [M, K], b [K, N], c [M, N], f32 row-major, 64 x
// 64 tiles; tile64.wgsl says the design) with the fused epilogue of epilogue.wgsl applied to the
// accumulators before they are stored: + bias[n], an activation, x gate[m / gate_rows, n], and
// c += instead of c =, each as params' flags ask. The product is tile64's, text for text
// (gemm64_acc.wgsl, gemm64_loop.wgsl, gemm64_store.wgsl).

// #include "bindings_f32_fused.wgsl"

// #include "tile64_decls.wgsl"

// #include "load_a.wgsl"

// #include "load_b.wgsl"

// #include "store_c.wgsl"

// #include "load_c.wgsl"

// #include "epilogue.wgsl"

// #include "gemm_stage_t.wgsl"

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile64_origin.wgsl"
  // And one vec4 of two rows of b (b_k and b_k + 8).
  let b_k = lid / LANES;
  let b_col = col0 + (lid % LANES) * 4u;
  let b_lane = lid % LANES;

// #include "gemm64_acc.wgsl"

// #include "gemm64_loop.wgsl"

// #include "tile64_epilogue.wgsl"

// #include "gemm64_store.wgsl"
}
