// matmul/q8row_dp4a: c = dequant(a) @ dequant(weight)^T on integer dot products. Both operands are
// int8 codes, four to a u32 (least significant byte first, two's complement), one f32 scale per row:
// a [M, K] is [M, ceil(K/4)] words with a_scales[m] (ops/quantize's `packed` writes it from f32
// activations), the weight [N, K] is ops/matvec's q8 format, [N, ceil(K/4)] words with scales[n].
// c[m, n] = (f32(sum_k code_a[m, k] code_w[n, k]) * a_scales[m]) * scales[n], c [M, N] f32.
//
// The sum is taken by dot4I8Packed (WGSL's packed_4x8_integer_dot_product; mod.ts refuses the plan
// where the language feature is missing) into i32, exact: K is at most 131,071, so no sum of
// products of int8 codes overflows. The 128 x 128 tile, for problems large enough to keep a GPU busy
// with it (q8row_dp4a_tile64 otherwise): 256 invocations per workgroup, 8 x 8 outputs each in sixteen
// vec4i sums, K walked 16 words (64 codes) at a time through 16 KiB of workgroup memory holding both
// blocks as words, transposed so that one vec4u read gives a word of four rows: per word of K, four
// vec4u reads feed 64 dot4I8Packed. Codes of a past K in a row's last word are masked to zero, so the
// weight's padding adds nothing. Loads outside the operands stage zeros and stores outside c are
// skipped, so every M, N and K in range works. Tiles beyond 65,535 fold into y:
// tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "params.wgsl"

// #include "dp4a_bindings.wgsl"

// #include "dp4a_tile128.wgsl"

// #include "dp4a_ops.wgsl"

// #include "dp4a_q8_loads.wgsl"

// #include "store_c_scalar.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup.wgsl"

// #include "dp4a_q8_product128.wgsl"

// #include "tile128_store.wgsl"
}
