// matmul/q4g128_tile64_fused: matmul/q4g128_tile64 (c = a @ dequant(weight)^T with an int4 Linear
// weight [N, K] and one scale per 128 columns of a row, 64 x 64 tiles; q4g128_tile64.wgsl says the
// design) with the fused epilogue of epilogue.wgsl applied to the accumulators before they are
// stored: + bias[n], an activation, x gate[m / gate_rows, n], and c += instead of c =, each as
// params' flags ask. The product is q4g128_tile64's, text for text.

// #include "bindings_q_tile64_fused.wgsl"

// #include "tile64_q_decls.wgsl"

// #include "load_a_scalar.wgsl"

const GROUP = 128u; // columns of a weight row per scale

// #include "q4_load_word_scale.wgsl"

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

// #include "q4g128_tile64_loop.wgsl"

// #include "tile64_q_epilogue.wgsl"

// #include "tile64_q_store.wgsl"
}
