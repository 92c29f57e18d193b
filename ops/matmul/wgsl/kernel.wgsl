// matmul/kernel: c = a @ b, a is [M, K], b is [K, N], c is [M, N], all f32 row-major.
// The 128 x 128 tile, for problems large enough to keep a GPU busy with it (see tile64 otherwise).
//
// Each workgroup computes one 128 x 128 tile of c; each of its 256 invocations owns 8 x 8 outputs
// in sixteen named vec4 accumulators, function-local variables of main. Invocation (tx, ty) =
// (lid % 16, lid / 16) owns rows 4ty..4ty+3 ("top") and 64+4ty..64+4ty+3 ("bottom") and columns
// 4tx..4tx+3 ("left") and 64+4tx..64+4tx+3 ("right"), so that neighbouring invocations read
// neighbouring vec4s of workgroup memory and write neighbouring vec4s of c. Per k, four vec4 reads
// of workgroup memory feed 64 FMAs.
//
// K is walked 16 at a time through one stage of workgroup memory (2 x 512 vec4s, 16 KiB: WebGPU's
// default maxComputeWorkgroupStorageSize): each invocation loads its share of the block (two vec4s
// of a, two of b) and stores it, a barrier, the block's 16 k-steps, a barrier. The k-steps are
// written out inline in main (k_steps128.wgsl), neither looped over (a driver may not unroll a WGSL
// loop) nor called as a function.
//
// Why this shape: on the H200 (Vulkan, no subgroups), a scratch kernel of this design (without the
// bound checks below) ran 4096^3 at 37.0 TFLOP/s where the previous NVIDIA kernel (two stages of
// K-step 16 at 32 KiB with the next block prefetched into registers, the accumulators module-scope
// private variables and each k-step a function call) ran at 29.5. Which of the three differences
// matter most was not measured apart.
//
// a's block is staged transposed, so one vec4 read gives an invocation four of its rows at one k,
// and b's block as vec4s along a row. a, b and c are read and written a vec4 at a time when their
// rows start on 16-byte boundaries (K % 4 == 0 for a, N % 4 == 0 for b and c), and element by
// element otherwise. Every guard is in the staging loads and the final stores, none in the k-steps:
// loads outside a or b stage zeros and stores outside c are skipped, so every M, N, K >= 1 works.
// Tiles beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "bindings_f32.wgsl"

const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 16u; // columns of a (rows of b) per block
const LANES = 32u; // vec4s across 128 rows or columns
const HALF = 16u; // vec4 offset of the bottom rows / right columns: 64 / 4

// a_t[k * LANES + i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// b_s[k * LANES + j] holds b[k0 + k, col0 + 4j .. 4j + 3].
var<workgroup> a_t: array<vec4f, STEP * LANES>;
var<workgroup> b_s: array<vec4f, STEP * LANES>;

// #include "load_a.wgsl"

// #include "load_b.wgsl"

// #include "store_c.wgsl"

// #include "stage_t.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile_origin.wgsl"
  let tx = lid % HALF;
  let ty = lid / HALF;

  // What this invocation stages per block: four consecutive k of two rows of a (a_row and
  // a_row + 64), and one vec4 of two rows of b (b_k and b_k + 8).
  let a_row = lid / 4u;
  let a_k = (lid % 4u) * 4u;
  let b_k = lid / LANES;
  let b_col = col0 + (lid % LANES) * 4u;
  let b_slot = b_k * LANES + lid % LANES;

// #include "acc128.wgsl"

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    // All four loads before any store, so that they are in flight together.
    let a_top = load_a(row0 + a_row, k0 + a_k);
    let a_bottom = load_a(row0 + a_row + 64u, k0 + a_k);
    let b_top = load_b(k0 + b_k, b_col);
    let b_bottom = load_b(k0 + b_k + 8u, b_col);
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 64u, a_k, a_bottom);
    b_s[b_slot] = b_top;
    b_s[b_slot + 8u * LANES] = b_bottom;
    workgroupBarrier();
// #include "k_steps128.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }

// #include "store_acc128.wgsl"
}
