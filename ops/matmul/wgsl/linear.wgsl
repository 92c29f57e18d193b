// matmul/linear: c = a @ weight^T (F.linear), a is [M, K], the weight is a Linear layer's [N, K] (one
// row per output feature, as checkpoints store it), c is [M, N], all f32 row-major. The 128 x 128
// tile, for problems large enough to keep a GPU busy with it (see linear_tile64 otherwise).
//
// matmul/kernel's design (kernel.wgsl says it and why) with the weight staged as q8row stages its
// decoded weight: each invocation loads four consecutive k of two rows of the weight, as it loads
// a's, and stage_w writes them transposed into workgroup memory, into the layout in which kernel
// stages b. From there the k-steps (k_steps128.wgsl), the accumulators and the stores are kernel's,
// and so is the workgroup memory, one stage of 16 KiB. Per block each invocation loads two vec4s of
// a and two of the weight, as kernel does (rows of 64 contiguous bytes, four invocations to a row),
// and writes eight scalars of each transposed block where kernel writes eight of a's and two vec4s
// of b's.
//
// a and the weight are read a vec4 at a time when K % 4 == 0, c written so when N % 4 == 0, element
// by element otherwise. Every guard is in the staging loads and the final stores, none in the
// k-steps: loads outside a or the weight stage zeros and stores outside c are skipped, so every
// M, N, K >= 1 works. Interior tiles (wholly inside c, K % 4 == 0, N % 4 == 0) stage their full
// blocks of K with unchecked vec4 loads at indices computed once and store c unchecked, as kernel's
// do. Tiles beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "bindings_linear.wgsl"

// #include "load_a.wgsl"

// #include "load_weight.wgsl"

// #include "tile128_decls.wgsl"

// #include "store_c.wgsl"

// #include "gemm_stage_t.wgsl"

// #include "stage_w.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile128_origin.wgsl"
// #include "tile128_nk_loop.wgsl"

// #include "tile128_store_interior.wgsl"
}
