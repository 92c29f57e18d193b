// matmul/q8row_dp4a_pipelined: c = dequant(a) @ dequant(weight)^T on integer dot products, int8
// activations with a scale per row times a q8 weight (q8row_dp4a.wgsl says the formats and the
// arithmetic): matmul/q8row_dp4a with another walk over K, for large problems on a device that allows
// 32 KiB of workgroup memory. Its bindings, params, tile (128 x 128, 256 invocations, 8 x 8 outputs
// each in sixteen vec4i sums, K walked 16 words of four codes a step) and outputs, bit for bit.
//
// What differs is the walk over K (dp4a_q8_product128_pipelined.wgsl). q8row_dp4a stages a step,
// waits for it (a barrier), runs its products and waits again (a second barrier), so each step's
// global loads wait out the memory latency with no arithmetic of the workgroup to hide them, and
// its transposed stores put two invocations on each bank. Here two stages of both blocks (32 KiB)
// alternate: each step's loads of the next step (eight consecutive words of one row of a and the
// same words of one weight row per invocation, as four vec4u of consecutive u32 loads) are issued
// before its 1,024 dot4I8Packed and stored to the other stage after them, so they are in flight
// during the products, and one barrier per step separates the stages. Invocations 0..127 load rows
// 0..127 at words 0..7 and 128..255 the same rows at words 8..15, so a warp's stores of one word are
// 32 consecutive u32s of workgroup memory, one per bank (dp4a_setup_pipelined.wgsl). The products
// are written out word by word (dp4a_k_steps128_pipelined.wgsl), four vec4u reads for 64
// dot4I8Packed per word. Interior tiles load the steps inside K unchecked at indices computed once;
// edge tiles and K's tail load through q8row_dp4a's checked, masked loads, so every M, N and K in
// range works (dp4a_interior_pipelined.wgsl). The cost is four vec4u registers held across the
// products (about 64 for the sums, 16 for the next step) and twice the workgroup memory. Tiles
// beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "params.wgsl"

// #include "dp4a_bindings.wgsl"

// #include "dp4a_tile128_pipelined.wgsl"

// #include "dp4a_ops.wgsl"

// #include "dp4a_q8_loads.wgsl"

// #include "store_c_scalar.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup_pipelined.wgsl"

// #include "dp4a_q8_product128_pipelined.wgsl"

// #include "tile128_store.wgsl"
}
