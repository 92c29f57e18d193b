// matmul/q4g128_dp4a_pipelined: c = dequant(a) @ dequant(weight)^T on integer dot products, int8
// activations with a scale per row times a q4 group-128 weight (q4g128_dp4a.wgsl says the formats and
// the arithmetic): matmul/q4g128_dp4a with q8row_dp4a_pipelined's walk over K (two stages of 16 words
// in 32 KiB, the next step's loads in flight during this step's products, one barrier per step,
// conflict-free transposed stores, unchecked loads in interior tiles; q8row_dp4a_pipelined.wgsl says
// why), for large problems on a device that allows 32 KiB of workgroup memory. Its bindings, params,
// tile and outputs are q4g128_dp4a's, bit for bit (dp4a_q4_product128_pipelined.wgsl).
//
// The group scales are applied as q4g128_dp4a applies them: a group of 128 codes is 32 words, two
// steps; after the products of its second step (or of K's last) its i32 sums are converted to f32,
// times the group's scales, added into f32 sums and reset, the same text at the same steps, and the
// activation scale is applied once per output at the end. That keeps sixteen vec4i and sixteen vec4f
// sums live (about 128 registers), so the walk holds as little more as it can: the next step's
// weight codes are held as the four q4 words loaded (one vec4u), widened to eight words of int8
// codes only as they are stored to the other stage, beside a's two vec4u (12 registers rather than
// q8's 16); and the group's eight scales are loaded with the next step's words at the top of a step
// that ends a group (8 registers, over that step's products), so their latency is hidden as well
// instead of stalling every invocation once per group between the products and the barrier.

// #include "params.wgsl"

// #include "dp4a_bindings.wgsl"

const GROUP = 128u; // columns per scale: two steps of the walk (4 * STEP each)

// #include "dp4a_tile128_pipelined.wgsl"

// #include "dp4a_ops.wgsl"

// #include "dp4a_q4_loads.wgsl"

// #include "store_c_scalar.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup_pipelined.wgsl"

// #include "dp4a_q4_product128_pipelined.wgsl"

// #include "tile128_store.wgsl"
}
