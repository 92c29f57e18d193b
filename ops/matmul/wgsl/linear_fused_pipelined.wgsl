// matmul/linear_fused_pipelined: matmul/linear_pipelined (c = a @ weight^T, the weight a Linear
// layer's [N, K], f32, 128 x 128 tiles over two stages of 16 columns in 32 KiB; kernel_pipelined.wgsl
// says why) with linear_fused's epilogue (epilogue.wgsl: + bias[n], an activation, x gate[m /
// gate_rows, n], and c += instead of c =, each as params' flags ask), applied to the accumulators
// after the walk over K, text for text as linear_fused applies it.

// #include "bindings_linear_fused.wgsl"

// #include "load_a.wgsl"

// #include "load_weight.wgsl"

// #include "tile128_pipelined_decls.wgsl"

// #include "store_c.wgsl"

// #include "load_c.wgsl"

// #include "epilogue.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile128_origin.wgsl"
// #include "tile128_nk_pipelined_loop.wgsl"

// #include "tile128_epilogue.wgsl"

// #include "tile128_store_interior.wgsl"
}
