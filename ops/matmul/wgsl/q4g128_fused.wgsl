// matmul/q4g128_fused: matmul/q4g128 (c = a @ dequant(weight)^T with an int4 Linear weight [N, K] and
// one scale per 128 columns of a row, 128 x 128 tiles; q4g128.wgsl says the format and the design)
// with the fused epilogue of epilogue.wgsl applied to the accumulators before they are stored:
// + bias[n], an activation, x gate[m / gate_rows, n], and c += instead of c =, each as params' flags
// ask. The product is q4g128's, text for text (q4g128_loop.wgsl, tile128_store.wgsl).

// #include "bindings_q_fused.wgsl"

const GROUP = 128u; // columns of a weight row per scale

// #include "tile128_decls.wgsl"

// #include "load_a.wgsl"

// #include "q4_load_word_scale.wgsl"

// #include "q4_decode.wgsl"

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

// #include "q4g128_loop.wgsl"

// #include "tile128_epilogue.wgsl"

// #include "tile128_store.wgsl"
}
