// matmul/q4g128_dp4a_fused_pipelined: matmul/q4g128_dp4a_pipelined (q4g128_dp4a's product, int8
// activations with a scale per row times a q4 group-128 weight, code products summed exactly in i32
// by dot4I8Packed, 128 x 128 tiles walked over two stages of K in 32 KiB; q4g128_dp4a_pipelined.wgsl
// says the design) with the fused epilogue of epilogue.wgsl applied to the finished outputs (after
// the group scales and the activation scale) before they are stored: + bias[n], an activation, x
// gate[m / gate_rows, n], and c += instead of c =, each as params' flags ask. Its bindings, params
// and outputs are q4g128_dp4a_fused's, bit for bit. The product is q4g128_dp4a_pipelined's, text for
// text (dp4a_setup_pipelined.wgsl, dp4a_q4_product128_pipelined.wgsl).

// #include "dp4a_bindings_fused.wgsl"

const GROUP = 128u; // columns per scale: two steps of the walk (4 * STEP each)

// #include "dp4a_tile128_pipelined.wgsl"

// #include "dp4a_ops.wgsl"

// #include "dp4a_q4_loads.wgsl"

// #include "store_c_scalar.wgsl"

// #include "load_c_scalar.wgsl"

// #include "epilogue.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup_pipelined.wgsl"

// #include "dp4a_q4_product128_pipelined.wgsl"

// #include "tile128_epilogue.wgsl"

// #include "tile128_store.wgsl"
}
