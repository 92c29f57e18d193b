// matmul/tile64: c = a @ b, a is [M, K], b is [K, N], c is [M, N], all f32 row-major.
// The 64 x 64 tile, for problems too small to keep a GPU busy with 128 x 128 tiles.
//
// Each workgroup computes one 64 x 64 tile of c; each of its 128 invocations owns 8 x 4 outputs in
// eight named vec4 accumulators (module-scope private variables, so that one k-step can be a
// function). Invocation (tx, ty) = (lid % 16, lid / 16) owns rows 4ty..4ty+3 ("top") and
// 32+4ty..32+4ty+3 ("bottom") and columns 4tx..4tx+3: per k it reads three vec4s of workgroup
// memory for 32 FMAs (a 4 x 4 block per invocation would read two for 16, and be bound by
// workgroup memory rather than by the FMAs).
//
// K is walked 16 at a time through two stages of workgroup memory (16 KiB, WebGPU's default limit).
// While the block in one stage is multiplied, the invocation's share of the next block is already
// loading into registers; it goes to the other stage afterwards, so one barrier per block suffices.
// The 16 k-steps of a block are written out rather than looped over.
//
// a's block is staged transposed, so one vec4 read gives an invocation four of its rows at one k,
// and b's block as vec4s along a row. a, b and c are read and written a vec4 at a time when their
// rows start on 16-byte boundaries (K % 4 == 0 for a, N % 4 == 0 for b and c), and element by
// element otherwise. Loads outside a or b stage zeros and stores outside c are skipped, so every
// M, N, K >= 1 works. Tiles beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x,
// bound-checked.

// #include "bindings_f32.wgsl"

const TILE_M = 64u;
const TILE_N = 64u;
const STEP = 16u; // columns of a (rows of b) per block
const STAGES = 2u; // blocks in workgroup memory at once
const LANES = 16u; // vec4s across 64 rows or columns
const HALF = 8u; // vec4 offset of the bottom rows: 32 / 4
const STAGE = STEP * LANES; // vec4s of one operand in one stage

// a_t[s * STAGE + k * LANES + i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// b_s[s * STAGE + k * LANES + j] holds b[k0 + k, col0 + 4j .. 4j + 3].
var<workgroup> a_t: array<vec4f, STAGES * STAGE>;
var<workgroup> b_s: array<vec4f, STAGES * STAGE>;

// The 8 x 4 outputs of this invocation, one vec4 per row: 0-3 the top rows, 4-7 the bottom ones.
// Module-scope private variables start at zero.
var<private> acc0: vec4f;
var<private> acc1: vec4f;
var<private> acc2: vec4f;
var<private> acc3: vec4f;
var<private> acc4: vec4f;
var<private> acc5: vec4f;
var<private> acc6: vec4f;
var<private> acc7: vec4f;

// #include "load_a.wgsl"

// #include "load_b.wgsl"

// #include "store_c.wgsl"

// #include "stage_t.wgsl"

// One k of the block: four rows of a at top and bottom, four columns of b, 32 FMAs.
fn k_step(ia: u32, ib: u32) {
  let top = a_t[ia];
  let bottom = a_t[ia + HALF];
  let cols = b_s[ib];
  acc0 = fma(vec4f(top.x), cols, acc0);
  acc1 = fma(vec4f(top.y), cols, acc1);
  acc2 = fma(vec4f(top.z), cols, acc2);
  acc3 = fma(vec4f(top.w), cols, acc3);
  acc4 = fma(vec4f(bottom.x), cols, acc4);
  acc5 = fma(vec4f(bottom.y), cols, acc5);
  acc6 = fma(vec4f(bottom.z), cols, acc6);
  acc7 = fma(vec4f(bottom.w), cols, acc7);
}

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile_origin.wgsl"
  let tx = lid % LANES;
  let ty = lid / LANES;

  // What this invocation stages per block: four consecutive k of two rows of a (a_row and
  // a_row + 32), and one vec4 of two rows of b (b_k and b_k + 8).
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
  var next_a1 = load_a(row0 + a_row + 32u, a_k);
  var next_b0 = load_b(b_k, b_col);
  var next_b1 = load_b(b_k + 8u, b_col);
  stage_t(0u, a_row, a_k, next_a0);
  stage_t(0u, a_row + 32u, a_k, next_a1);
  b_s[b_slot] = next_b0;
  b_s[b_slot + 8u * LANES] = next_b1;
  workgroupBarrier();
  for (var t = 0u; t < blocks; t++) {
    let base = (t & 1u) * STAGE;
    let more = t + 1u < blocks;
    let k_next = (t + 1u) * STEP;
    if (more) {
      next_a0 = load_a(row0 + a_row, k_next + a_k);
      next_a1 = load_a(row0 + a_row + 32u, k_next + a_k);
      next_b0 = load_b(k_next + b_k, b_col);
      next_b1 = load_b(k_next + b_k + 8u, b_col);
    }
    let ia = base + ty;
    let ib = base + tx;
// #include "k_steps16.wgsl"
    if (more) {
      stage_t(STAGE - base, a_row, a_k, next_a0);
      stage_t(STAGE - base, a_row + 32u, a_k, next_a1);
      b_s[STAGE - base + b_slot] = next_b0;
      b_s[STAGE - base + b_slot + 8u * LANES] = next_b1;
    }
    workgroupBarrier();
  }

  let top_row = row0 + ty * 4u;
  let bottom_row = top_row + 32u;
  let col = col0 + tx * 4u;
  store_c(top_row, col, acc0);
  store_c(top_row + 1u, col, acc1);
  store_c(top_row + 2u, col, acc2);
  store_c(top_row + 3u, col, acc3);
  store_c(bottom_row, col, acc4);
  store_c(bottom_row + 1u, col, acc5);
  store_c(bottom_row + 2u, col, acc6);
  store_c(bottom_row + 3u, col, acc7);
}
