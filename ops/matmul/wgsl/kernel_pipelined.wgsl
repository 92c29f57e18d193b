// matmul/kernel_pipelined: c = a @ b, a is [M, K], b is [K, N], c is [M, N], all f32 row-major: a
// variant design of matmul/kernel for large problems, not chosen by the plans (an override runs it)
// until the H200 has timed it against kernel. kernel.wgsl says the shared design: a 128 x 128 tile
// per workgroup, 8 x 8 outputs per invocation in sixteen named vec4 accumulators, the k-steps written
// out inline, a's block staged transposed, interior tiles loading and storing unchecked.
//
// What differs is the walk over K (tile128_kn_pipelined_loop.wgsl): kernel stages a block of 16, waits
// for it (a barrier), runs its k-steps and waits again (a second barrier), so each block's global
// loads are exposed to the memory latency with no arithmetic of this workgroup to hide them. Here
// the same 16 KiB of workgroup memory hold two stages of 8 columns, and each block's loads for the
// next block (one vec4 of a and one of b per invocation) are issued before its 8 k-steps and stored
// to the other stage after them: the loads are in flight during the FMAs, and one barrier per block
// (one per 8 k, as kernel's two per 16) separates the stages. The cost is two vec4 registers held
// across the k-steps. The staging stores hit two banks per address pair (row s_row of 16 rows per
// warp), where kernel's hit four.

// #include "bindings_f32.wgsl"

// #include "load_a.wgsl"

// #include "load_b.wgsl"

// #include "quads_f32.wgsl"

// #include "tile128_pipelined_decls.wgsl"

// #include "store_c.wgsl"

// #include "gemm_stage_t.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile128_origin.wgsl"
// #include "tile128_kn_pipelined_loop.wgsl"

// #include "tile128_store_interior.wgsl"
}
