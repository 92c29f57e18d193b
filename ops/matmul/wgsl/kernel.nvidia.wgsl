// matmul/kernel.nvidia: c = a @ b, a is [M, K], b is [K, N], c is [M, N], all f32 row-major.
// The portable kernel with K walked 16 at a time instead of 8: half the barriers per FMA, at 32 KiB
// of workgroup memory, more than WebGPU's default limit (NVIDIA's Vulkan driver allows 48 KiB; the
// plan refuses this variant, naming maxComputeWorkgroupStorageSize, on a device granted less).
//
// Each workgroup computes one 128 x 128 tile of c; each of its 256 invocations owns 8 x 8 outputs
// in sixteen named vec4 accumulators (module-scope private variables, so that one k-step can be a
// function; an array of them may be spilled to memory). Invocation (tx, ty) = (lid % 16, lid / 16)
// owns rows 4ty..4ty+3 ("top") and 64+4ty..64+4ty+3 ("bottom") and columns 4tx..4tx+3 ("left")
// and 64+4tx..64+4tx+3 ("right"), so that neighbouring invocations read neighbouring vec4s of
// workgroup memory and write neighbouring vec4s of c.
//
// K is walked 16 at a time through two stages of workgroup memory (32 KiB).
// While the block in one stage is multiplied, the invocation's share of the next block is already
// loading into registers; it goes to the other stage afterwards, so one barrier per block suffices
// and the loads' latency hides behind the FMAs. The 16 k-steps of a block are written out rather
// than looped over: a loop the driver does not unroll costs a counter and a branch per k-step, and
// keeps one k-step's workgroup-memory reads from overlapping another's FMAs.
//
// a's block is staged transposed, so one vec4 read gives an invocation four of its rows at one k,
// and b's block as vec4s along a row. a, b and c are read and written a vec4 at a time when their
// rows start on 16-byte boundaries (K % 4 == 0 for a, N % 4 == 0 for b and c), and element by
// element otherwise. Loads outside a or b stage zeros and stores outside c are skipped, so every
// M, N, K >= 1 works. Tiles beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x,
// bound-checked.

// #include "bindings_f32.wgsl"

const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 16u; // columns of a (rows of b) per block
const STAGES = 2u; // blocks in workgroup memory at once
const LANES = 32u; // vec4s across 128 rows or columns
const HALF = 16u; // vec4 offset of the bottom rows / right columns: 64 / 4
const STAGE = STEP * LANES; // vec4s of one operand in one stage

// a_t[s * STAGE + k * LANES + i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// b_s[s * STAGE + k * LANES + j] holds b[k0 + k, col0 + 4j .. 4j + 3].
var<workgroup> a_t: array<vec4f, STAGES * STAGE>;
var<workgroup> b_s: array<vec4f, STAGES * STAGE>;

// #include "acc128.wgsl"

// #include "load_a.wgsl"

// #include "load_b.wgsl"

// #include "store_c.wgsl"

// #include "stage_t.wgsl"

// #include "k_step128.wgsl"

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

  // Block 0 into stage 0; then each block's successor loads into registers while it is multiplied,
  // and goes to the other stage after. One barrier per block: the stage written during block t was
  // last read during block t - 1, which every invocation finished before the barrier ending it.
  let blocks = (params.k + STEP - 1u) / STEP;
  var next_a0 = load_a(row0 + a_row, a_k);
  var next_a1 = load_a(row0 + a_row + 64u, a_k);
  var next_b0 = load_b(b_k, b_col);
  var next_b1 = load_b(b_k + 8u, b_col);
  stage_t(0u, a_row, a_k, next_a0);
  stage_t(0u, a_row + 64u, a_k, next_a1);
  b_s[b_slot] = next_b0;
  b_s[b_slot + 8u * LANES] = next_b1;
  workgroupBarrier();
  for (var t = 0u; t < blocks; t++) {
    let base = (t & 1u) * STAGE;
    let more = t + 1u < blocks;
    let k_next = (t + 1u) * STEP;
    if (more) {
      next_a0 = load_a(row0 + a_row, k_next + a_k);
      next_a1 = load_a(row0 + a_row + 64u, k_next + a_k);
      next_b0 = load_b(k_next + b_k, b_col);
      next_b1 = load_b(k_next + b_k + 8u, b_col);
    }
    let ia = base + ty;
    let ib = base + tx;
// #include "k_steps16.wgsl"
    if (more) {
      stage_t(STAGE - base, a_row, a_k, next_a0);
      stage_t(STAGE - base, a_row + 64u, a_k, next_a1);
      b_s[STAGE - base + b_slot] = next_b0;
      b_s[STAGE - base + b_slot + 8u * LANES] = next_b1;
    }
    workgroupBarrier();
  }

// #include "store_acc128.wgsl"
}
