// matmul/tile64: c = a @ b, a is [M, K], b is [K, N], c is [M, N], all f32 row-major.
// The 64 x 64 tile, for problems too small to keep a GPU busy with 128 x 128 tiles.
//
// Each workgroup computes one 64 x 64 tile of c; each of its 128 invocations owns 8 x 4 outputs in
// eight named vec4 accumulators, function-local variables of main. Invocation (tx, ty) =
// (lid % 16, lid / 16) owns rows 4ty..4ty+3 ("top") and 32+4ty..32+4ty+3 ("bottom") and columns
// 4tx..4tx+3: per k it reads three vec4s of workgroup memory for 32 FMAs (a 4 x 4 block per
// invocation would read two for 16, and be bound by workgroup memory rather than by the FMAs).
//
// The same design as kernel.wgsl's, at half the tile (see there for why): K walked 16 at a time
// through one stage of workgroup memory (2 x 256 vec4s, 8 KiB), each invocation loading two vec4s of
// a and two of b per block and storing them, a barrier, the block's 16 k-steps written out inline in
// main, a barrier. Everything of main after its setup (accumulators, the walk over K, the stores)
// is harness/wgsl/gemm64_main_body.wgsl, shared with stft's and mel's gathered GEMM
// (gemm64_gathered.wgsl), and its k-steps are gemm64_k_steps.wgsl there.
//
// a's block is staged transposed, so one vec4 read gives an invocation four of its rows at one k,
// and b's block as vec4s along a row. a, b and c are read and written a vec4 at a time when their
// rows start on 16-byte boundaries (K % 4 == 0 for a, N % 4 == 0 for b and c), and element by
// element otherwise. Every guard is in the staging loads and the final stores, none in the k-steps:
// loads outside a or b stage zeros and stores outside c are skipped, so every M, N, K >= 1 works.
// Tiles beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "bindings_f32.wgsl"

// #include "tile64_decls.wgsl"

// #include "load_a.wgsl"

// #include "load_b.wgsl"

// #include "store_c.wgsl"

// #include "gemm_stage_t.wgsl"

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile64_origin.wgsl"
  // And one vec4 of two rows of b (b_k and b_k + 8).
  let b_k = lid / LANES;
  let b_col = col0 + (lid % LANES) * 4u;
  let b_lane = lid % LANES;

// #include "gemm64_main_body.wgsl"
}
