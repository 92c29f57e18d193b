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
struct Params {
  m: u32,
  n: u32,
  k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> b: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

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

// The 8 x 8 outputs of this invocation: rows 0-3 of acc are the top rows, 4-7 the bottom ones.
// Module-scope private variables start at zero.
var<private> acc0_left: vec4f;
var<private> acc0_right: vec4f;
var<private> acc1_left: vec4f;
var<private> acc1_right: vec4f;
var<private> acc2_left: vec4f;
var<private> acc2_right: vec4f;
var<private> acc3_left: vec4f;
var<private> acc3_right: vec4f;
var<private> acc4_left: vec4f;
var<private> acc4_right: vec4f;
var<private> acc5_left: vec4f;
var<private> acc5_right: vec4f;
var<private> acc6_left: vec4f;
var<private> acc6_right: vec4f;
var<private> acc7_left: vec4f;
var<private> acc7_right: vec4f;

// Four consecutive k of row `row` of a, from column k (a multiple of 4); zeros outside a.
fn load_a(row: u32, k: u32) -> vec4f {
  var v = vec4f(0.0);
  if (row < params.m && k < params.k) {
    let e = row * params.k + k;
    if (params.k % 4u == 0u) {
      v = a[e / 4u];
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (k + j < params.k) {
          v[j] = a[(e + j) / 4u][(e + j) % 4u];
        }
      }
    }
  }
  return v;
}

// Four consecutive columns of row k of b, from column col (a multiple of 4); zeros outside b.
fn load_b(k: u32, col: u32) -> vec4f {
  var v = vec4f(0.0);
  if (k < params.k && col < params.n) {
    let e = k * params.n + col;
    if (params.n % 4u == 0u) {
      v = b[e / 4u];
    } else {
      for (var j = 0u; j < 4u; j++) {
        if (col + j < params.n) {
          v[j] = b[(e + j) / 4u][(e + j) % 4u];
        }
      }
    }
  }
  return v;
}

fn store_c(row: u32, col: u32, v: vec4f) {
  if (row >= params.m || col >= params.n) {
    return;
  }
  let e = row * params.n + col;
  if (params.n % 4u == 0u) {
    c[e / 4u] = v;
    return;
  }
  for (var j = 0u; j < 4u; j++) {
    if (col + j < params.n) {
      c[(e + j) / 4u][(e + j) % 4u] = v[j];
    }
  }
}

// Writes four consecutive k of one row of an operand, from column k of the block, into the
// transposed stage at `base`: slot (k + j) * LANES + row / 4, component row % 4.
fn stage_t(base: u32, row: u32, k: u32, v: vec4f) {
  let slot = base + k * LANES + row / 4u;
  a_t[slot][row % 4u] = v.x;
  a_t[slot + LANES][row % 4u] = v.y;
  a_t[slot + 2u * LANES][row % 4u] = v.z;
  a_t[slot + 3u * LANES][row % 4u] = v.w;
}

// One k of the block: four rows of a at top and bottom, four columns of b at left and
// right, 64 FMAs.
fn k_step(ia: u32, ib: u32) {
  let top = a_t[ia];
  let bottom = a_t[ia + HALF];
  let left = b_s[ib];
  let right = b_s[ib + HALF];
  acc0_left = fma(vec4f(top.x), left, acc0_left);
  acc0_right = fma(vec4f(top.x), right, acc0_right);
  acc1_left = fma(vec4f(top.y), left, acc1_left);
  acc1_right = fma(vec4f(top.y), right, acc1_right);
  acc2_left = fma(vec4f(top.z), left, acc2_left);
  acc2_right = fma(vec4f(top.z), right, acc2_right);
  acc3_left = fma(vec4f(top.w), left, acc3_left);
  acc3_right = fma(vec4f(top.w), right, acc3_right);
  acc4_left = fma(vec4f(bottom.x), left, acc4_left);
  acc4_right = fma(vec4f(bottom.x), right, acc4_right);
  acc5_left = fma(vec4f(bottom.y), left, acc5_left);
  acc5_right = fma(vec4f(bottom.y), right, acc5_right);
  acc6_left = fma(vec4f(bottom.z), left, acc6_left);
  acc6_right = fma(vec4f(bottom.z), right, acc6_right);
  acc7_left = fma(vec4f(bottom.w), left, acc7_left);
  acc7_right = fma(vec4f(bottom.w), right, acc7_right);
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let tiles_n = (params.n + TILE_N - 1u) / TILE_N;
  let tiles = ((params.m + TILE_M - 1u) / TILE_M) * tiles_n;
  let tile = wid.x + wid.y * groups.x;
  if (tile >= tiles) {
    return;
  }
  let row0 = (tile / tiles_n) * TILE_M;
  let col0 = (tile % tiles_n) * TILE_N;
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
    k_step(ia, ib);
    k_step(ia + 1u * LANES, ib + 1u * LANES);
    k_step(ia + 2u * LANES, ib + 2u * LANES);
    k_step(ia + 3u * LANES, ib + 3u * LANES);
    k_step(ia + 4u * LANES, ib + 4u * LANES);
    k_step(ia + 5u * LANES, ib + 5u * LANES);
    k_step(ia + 6u * LANES, ib + 6u * LANES);
    k_step(ia + 7u * LANES, ib + 7u * LANES);
    k_step(ia + 8u * LANES, ib + 8u * LANES);
    k_step(ia + 9u * LANES, ib + 9u * LANES);
    k_step(ia + 10u * LANES, ib + 10u * LANES);
    k_step(ia + 11u * LANES, ib + 11u * LANES);
    k_step(ia + 12u * LANES, ib + 12u * LANES);
    k_step(ia + 13u * LANES, ib + 13u * LANES);
    k_step(ia + 14u * LANES, ib + 14u * LANES);
    k_step(ia + 15u * LANES, ib + 15u * LANES);
    if (more) {
      stage_t(STAGE - base, a_row, a_k, next_a0);
      stage_t(STAGE - base, a_row + 64u, a_k, next_a1);
      b_s[STAGE - base + b_slot] = next_b0;
      b_s[STAGE - base + b_slot + 8u * LANES] = next_b1;
    }
    workgroupBarrier();
  }

  let top_row = row0 + ty * 4u;
  let bottom_row = top_row + 64u;
  let left_col = col0 + tx * 4u;
  let right_col = left_col + 64u;
  store_c(top_row, left_col, acc0_left);
  store_c(top_row, right_col, acc0_right);
  store_c(top_row + 1u, left_col, acc1_left);
  store_c(top_row + 1u, right_col, acc1_right);
  store_c(top_row + 2u, left_col, acc2_left);
  store_c(top_row + 2u, right_col, acc2_right);
  store_c(top_row + 3u, left_col, acc3_left);
  store_c(top_row + 3u, right_col, acc3_right);
  store_c(bottom_row, left_col, acc4_left);
  store_c(bottom_row, right_col, acc4_right);
  store_c(bottom_row + 1u, left_col, acc5_left);
  store_c(bottom_row + 1u, right_col, acc5_right);
  store_c(bottom_row + 2u, left_col, acc6_left);
  store_c(bottom_row + 2u, right_col, acc6_right);
  store_c(bottom_row + 3u, left_col, acc7_left);
  store_c(bottom_row + 3u, right_col, acc7_right);
}
