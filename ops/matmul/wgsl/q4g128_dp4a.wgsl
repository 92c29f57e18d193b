// matmul/q4g128_dp4a: c = dequant(a) @ dequant(weight)^T on integer dot products. a [M, K] is int8
// codes four to a u32 (least significant byte first, two's complement), [M, ceil(K/4)] words, with
// one f32 scale per row, a_scales[m] (ops/quantize's `packed` writes it from f32 activations); the
// weight [N, K] is ops/matvec's q4 group-128 format: [N, ceil(K/8)] u32, eight two's-complement
// nibbles per word, least significant first, and scales[n, g] ([N, ceil(K/128)]) for columns
// 128g .. 128g + 127 of row n.
// c[m, n] = (sum_g f32(sum_{k in g} code_a[m, k] code_w[n, k]) * scales[n, g]) * a_scales[m], the
// groups summed in f32 in order of g, c [M, N] f32.
//
// q8row_dp4a's 128 x 128 tile and walk (q8row_dp4a.wgsl says the design); each q4 word is widened
// while it is staged into two words of four int8 codes (pack4xI8 of the sign-extended nibbles). A
// group is two steps of 64 codes: its sums are taken in i32 by dot4I8Packed, exact, and after its
// second step (or the last step of K) scaled by the group's scales into f32 sums; the activation
// scale is applied once per output at the end. Needs WGSL's packed_4x8_integer_dot_product (mod.ts
// refuses the plan where it is missing).

// #include "params.wgsl"

// #include "dp4a_bindings.wgsl"

const GROUP = 128u; // columns per scale: two steps of the walk (4 * STEP each)

// #include "dp4a_tile128.wgsl"

// #include "dp4a_ops.wgsl"

// #include "dp4a_q4_loads.wgsl"

// #include "store_c_scalar.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup.wgsl"

// #include "dp4a_q4_product128.wgsl"

// #include "tile128_store.wgsl"
}
