// matmul/linear_pipelined: c = a @ weight^T (F.linear), a is [M, K], the weight a Linear layer's
// [N, K], c is [M, N], all f32 row-major: matmul/linear with kernel_pipelined's walk over K (two
// stages of 16 columns in 32 KiB, the next block's loads in flight during this block's k-steps, one
// barrier per block; kernel_pipelined.wgsl says why), the weight staged as linear stages it and
// written transposed by stage_w_in (tile128_nk_pipelined_loop.wgsl).

// #include "bindings_linear.wgsl"

// #include "load_a.wgsl"

// #include "load_weight.wgsl"

// #include "tile128_pipelined_decls.wgsl"

// #include "store_c.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile128_origin.wgsl"
// #include "tile128_nk_pipelined_loop.wgsl"

// #include "tile128_store_interior.wgsl"
}
