// matmul/q4g128_dp4a_tile64: q4g128_dp4a's product (c = dequant(a) @ dequant(weight)^T, int8
// activations with a scale per row times a q4 group-128 weight; q4g128_dp4a.wgsl says the formats
// and the arithmetic) in q8row_dp4a_tile64's 64 x 64 tiles, whose step of 128 codes is one group:
// the group's i32 sums are scaled into the f32 sums at the end of every step.

// #include "params.wgsl"

// #include "dp4a_bindings.wgsl"

const GROUP = 128u; // columns per scale: one step of the walk (4 * STEP)

// #include "dp4a_tile64.wgsl"

// #include "dp4a_ops.wgsl"

// #include "store_c_scalar.wgsl"

// #include "dp4a_q4_loads.wgsl"

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup.wgsl"

// #include "dp4a_q4_product64.wgsl"

// #include "gemm64_store.wgsl"
}
