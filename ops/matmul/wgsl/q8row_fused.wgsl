// matmul/q8row_fused: matmul/q8row (c = a @ dequant(weight)^T with an int8 Linear weight [N, K] and
// one scale per row, 128 x 128 tiles; q8row.wgsl says the format and the design) with the fused
// epilogue of epilogue.wgsl applied to the scaled accumulators before they are stored: + bias[n], an
// activation, x gate[m / gate_rows, n], and c += instead of c =, each as params' flags ask. The
// product is q8row's, text for text (q8row_loop.wgsl, q8row_scale.wgsl, tile128_store.wgsl).

// #include "bindings_q_fused.wgsl"

// #include "tile128_decls.wgsl"

// #include "load_a.wgsl"

// #include "q8_load_word.wgsl"

// #include "q8_decode.wgsl"

// #include "q8_load_scale.wgsl"

// #include "q8_infinite_scale.wgsl"

// #include "store_c.wgsl"

// #include "load_c.wgsl"

// #include "epilogue.wgsl"

// #include "gemm_stage_t.wgsl"

// #include "stage_w.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile128_origin.wgsl"

// #include "gemm_acc8x8.wgsl"

// #include "q8row_loop.wgsl"

// #include "q8row_scale.wgsl"

// #include "tile128_epilogue.wgsl"

// #include "tile128_store.wgsl"
}
