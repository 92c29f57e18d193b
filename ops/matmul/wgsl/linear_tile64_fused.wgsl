// matmul/linear_tile64_fused: matmul/linear_tile64 (c = a @ weight^T, the weight a Linear layer's
// [N, K], f32, 64 x 64 tiles) with the fused epilogue of epilogue.wgsl applied to the accumulators
// before they are stored: + bias[n], an activation, x gate[m / gate_rows, n], and c += instead of
// c =, each as params' flags ask. The product is linear_tile64's, text for text.

// #include "bindings_linear_fused.wgsl"

// #include "tile64_decls.wgsl"

// #include "load_a.wgsl"

// #include "load_weight.wgsl"

// #include "store_c.wgsl"

// #include "load_c.wgsl"

// #include "epilogue.wgsl"

// #include "gemm_stage_t.wgsl"

// #include "stage_w.wgsl"

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile64_origin.wgsl"

// #include "gemm64_acc.wgsl"

// #include "tile64_nk_loop.wgsl"

// #include "tile64_epilogue.wgsl"

// #include "gemm64_store.wgsl"
}
