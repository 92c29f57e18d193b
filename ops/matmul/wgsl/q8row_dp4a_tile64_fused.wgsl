// matmul/q8row_dp4a_tile64_fused: matmul/q8row_dp4a_tile64 (q8row_dp4a's product, int8 activations
// with a scale per row times a q8 weight on dot4I8Packed, in 64 x 64 tiles; q8row_dp4a_tile64.wgsl
// says the design) with the fused epilogue of epilogue.wgsl applied to the finished outputs (the sums
// after both scales) before they are stored: + bias[n], an activation, x gate[m / gate_rows, n], and
// c += instead of c =, each as params' flags ask. The product is q8row_dp4a_tile64's, text for text
// (dp4a_setup.wgsl, dp4a_q8_product64.wgsl).

// #include "dp4a_bindings_fused.wgsl"

// #include "dp4a_tile64.wgsl"

// #include "dp4a_ops.wgsl"

// #include "store_c_scalar.wgsl"

// #include "load_c_scalar.wgsl"

// #include "epilogue.wgsl"

// #include "dp4a_q8_loads.wgsl"

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup.wgsl"

// #include "dp4a_q8_product64.wgsl"

// #include "tile64_epilogue.wgsl"

// #include "gemm64_store.wgsl"
}
