// matmul/kernel_fused: matmul/kernel (c = a @ b, a [M, K], b [K, N], c [M, N], f32 row-major, 128 x
// 128 tiles; kernel.wgsl says the design and why) with the fused epilogue of epilogue.wgsl applied to
// the accumulators before they are stored: + bias[n], an activation, x gate[m / gate_rows, n], and
// c += instead of c =, each as params' flags ask. The product's loads, k-steps and stores are
// kernel's, text for text (tile128_kn_loop.wgsl, tile128_store_interior.wgsl); the epilogue runs once
// per output, after the walk over K.

// #include "bindings_f32_fused.wgsl"

// #include "load_a.wgsl"

// #include "load_b.wgsl"

// #include "quads_f32.wgsl"

// #include "tile128_decls.wgsl"

// #include "store_c.wgsl"

// #include "load_c.wgsl"

// #include "epilogue.wgsl"

// #include "gemm_stage_t.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile128_origin.wgsl"
// #include "tile128_kn_loop.wgsl"

// #include "tile128_epilogue.wgsl"

// #include "tile128_store_interior.wgsl"
}
