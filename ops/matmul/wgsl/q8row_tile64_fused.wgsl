// matmul/q8row_tile64_fused: matmul/q8row_tile64 (c = a @ dequant(weight)^T with an int8 Linear
// weight [N, K] and one scale per row, 64 x 64 tiles; q8row_tile64.wgsl says the design) with the
// fused epilogue of epilogue.wgsl applied to the scaled accumulators before they are stored:
// + bias[n], an activation, x gate[m / gate_rows, n], and c += instead of c =, each as params' flags
// ask. The product is q8row_tile64's, text for text.

// #include "bindings_q_tile64_fused.wgsl"

// #include "tile64_q_decls.wgsl"

// #include "load_a_scalar.wgsl"

// #include "q8_load_word.wgsl"

// #include "q8_load_scale.wgsl"

// #include "q8_infinite_scale.wgsl"

// #include "store_c_scalar.wgsl"

// #include "load_c_scalar.wgsl"

// #include "epilogue.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile64_q_setup.wgsl"

// #include "q8row_tile64_loop.wgsl"

// #include "tile64_q8_scale.wgsl"

// #include "tile64_q_epilogue.wgsl"

// #include "tile64_q_store.wgsl"
}
