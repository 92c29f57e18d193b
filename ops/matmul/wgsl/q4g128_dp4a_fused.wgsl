// matmul/q4g128_dp4a_fused: matmul/q4g128_dp4a (c = dequant(a) @ dequant(weight)^T, int8 activations
// with a scale per row times a q4 group-128 weight, code products summed exactly in i32 by
// dot4I8Packed, 128 x 128 tiles; q4g128_dp4a.wgsl says the formats and the arithmetic) with the fused
// epilogue of epilogue.wgsl applied to the finished outputs (after the group scales and the
// activation scale) before they are stored: + bias[n], an activation, x gate[m / gate_rows, n], and
// c += instead of c =, each as params' flags ask. The product is q4g128_dp4a's, text for text
// (dp4a_setup.wgsl, dp4a_q4_product128.wgsl).

// #include "dp4a_bindings_fused.wgsl"

const GROUP = 128u; // columns per scale: two steps of the walk (4 * STEP each)

// #include "dp4a_tile128.wgsl"

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
// #include "dp4a_setup.wgsl"

// #include "dp4a_q4_product128.wgsl"

// #include "tile128_epilogue.wgsl"

// #include "tile128_store.wgsl"
}
