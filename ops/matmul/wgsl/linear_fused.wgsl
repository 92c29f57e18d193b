// matmul/linear_fused: matmul/linear (c = a @ weight^T, the weight a Linear layer's [N, K], f32, 128
// x 128 tiles; linear.wgsl says the design) with the fused epilogue of epilogue.wgsl applied to the
// accumulators before they are stored: + bias[n], an activation, x gate[m / gate_rows, n], and
// c += instead of c =, each as params' flags ask. The product is linear's, text for text
// (tile128_nk_loop.wgsl, tile128_store_interior.wgsl); the epilogue runs once per output, after the
// walk over K.

// #include "bindings_linear_fused.wgsl"

// #include "load_a.wgsl"

// #include "load_weight.wgsl"

// #include "tile128_decls.wgsl"

// #include "store_c.wgsl"

// #include "load_c.wgsl"

// #include "epilogue.wgsl"

// #include "gemm_stage_t.wgsl"

// #include "stage_w.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile128_origin.wgsl"
// #include "tile128_nk_loop.wgsl"

// #include "tile128_epilogue.wgsl"

// #include "tile128_store_interior.wgsl"
}
