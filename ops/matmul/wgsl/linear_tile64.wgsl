// matmul/linear_tile64: c = a @ weight^T (F.linear), a is [M, K], the weight a Linear layer's [N, K],
// c is [M, N], all f32 row-major. The 64 x 64 tile, for problems too small to keep a GPU busy with
// linear's 128 x 128 tiles.
//
// matmul/tile64's design (tile64.wgsl) with the weight staged as linear stages it: per block each
// invocation loads four consecutive k of two rows of a (a_row, a_row + 32) and of the same two rows of
// the weight's block (col0 + a_row, col0 + a_row + 32), and stage_w writes the weight's transposed into
// the layout in which tile64 stages b; the k-steps (gemm64_k_steps.wgsl), the accumulators and the
// stores are tile64's. 8 KiB of workgroup memory. Loads outside a or the weight stage zeros and stores
// outside c are skipped, so every M, N, K >= 1 works. Tiles beyond 65,535 fold into y:
// tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "bindings_linear.wgsl"

// #include "tile64_decls.wgsl"

// #include "load_a.wgsl"

// #include "load_weight.wgsl"

// #include "store_c.wgsl"

// #include "gemm_stage_t.wgsl"

// #include "stage_w.wgsl"

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile64_origin.wgsl"

// #include "gemm64_acc.wgsl"

// #include "tile64_nk_loop.wgsl"

// #include "gemm64_store.wgsl"
}
