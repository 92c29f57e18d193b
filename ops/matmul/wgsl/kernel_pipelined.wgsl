// matmul/kernel_pipelined: c = a @ b, a is [M, K], b is [K, N], c is [M, N], all f32 row-major:
// matmul/kernel with another walk over K, for large problems on a device that allows 32 KiB of
// workgroup memory. kernel.wgsl says the shared design: a 128 x 128 tile per workgroup, 8 x 8
// outputs per invocation in sixteen named vec4 accumulators, the k-steps written out inline, a's
// block staged transposed, interior tiles loading and storing unchecked.
//
// What differs is the walk over K (tile128_kn_pipelined_loop.wgsl): kernel stages a block of 16,
// waits for it (a barrier), runs its k-steps and waits again (a second barrier), so each block's
// global loads are exposed to the memory latency with no arithmetic of this workgroup to hide them.
// Here two stages of 16 columns (32 KiB) alternate: each block's loads for the next block (the same
// two vec4s of a and two of b per invocation as kernel's) are issued before its 16 k-steps and
// stored to the other stage after them, so the loads are in flight during the FMAs, and one barrier
// per block separates the stages. The cost is four vec4 registers held across the k-steps and
// twice the workgroup memory.

// #include "bindings_f32.wgsl"

// #include "load_a.wgsl"

// #include "load_b.wgsl"

// #include "quads_f32.wgsl"

// #include "tile128_pipelined_decls.wgsl"

// #include "store_c.wgsl"

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
