// matmul/q4g128: c = a @ dequant(weight)^T (F.linear), a is [M, K] f32, c is [M, N] f32, and the weight
// [N, K] is int4 in groups of 128 columns: weight is [N, ceil(K/8)] u32, eight two's-complement
// nibbles per word, least significant nibble first, and scales[n, g] (scales is [N, ceil(K/128)])
// scales columns 128g .. 128g + 127 of row n. c[m, n] = sum_k a[m, k] * code[n, k] * scales[n, k / 128].
//
// The tiling is matmul/kernel's, with the weight in b's place:
//
// Each workgroup computes one 128 x 128 tile of c; each of its 256 invocations owns 8 x 8 outputs
// in sixteen named vec4 accumulators (module-scope private variables, so that one k-step can be a
// function; an array of them may be spilled to memory). Invocation (tx, ty) = (lid % 16, lid / 16)
// owns rows 4ty..4ty+3 ("top") and 64+4ty..64+4ty+3 ("bottom") and columns 4tx..4tx+3 ("left")
// and 64+4tx..64+4tx+3 ("right"), so that neighbouring invocations read neighbouring vec4s of
// workgroup memory and write neighbouring vec4s of c.
//
// K is walked 8 at a time through two stages of workgroup memory (16 KiB, WebGPU's default limit).
// While the block in one stage is multiplied, the invocation's share of the next block is already
// loading into registers; it goes to the other stage afterwards, so one barrier per block suffices
// and the loads' latency hides behind the FMAs. The 8 k-steps of a block are written out rather
// than looped over: a loop the driver does not unroll costs a counter and a branch per k-step, and
// keeps one k-step's workgroup-memory reads from overlapping another's FMAs.
//
// The weight is decoded as it is staged (half a word, four codes, per invocation per block; no
// separate dequantize pass), transposed into the same layout as b's. A block of 8 columns never
// straddles a group of 128, so each staged value is code * its group's scale, rounded once to f32.
// Codes in the padding of a row's last word (k >= K) stage as zeros. a is read a vec4 at a time when
// K % 4 == 0 and c written so when N % 4 == 0, element by element otherwise. Loads outside the
// operands stage zeros and stores outside c are skipped, so every M, N, K >= 1 works. Tiles beyond 65,535
// fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.
struct Params {
  m: u32,
  n: u32,
  k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<u32>;
@group(0) @binding(2) var<storage, read> scales: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<vec4f>;
@group(0) @binding(4) var<uniform> params: Params;

const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 8u; // columns of a (rows of the weight's transpose) per block
const STAGES = 2u; // blocks in workgroup memory at once
const LANES = 32u; // vec4s across 128 rows or columns
const HALF = 16u; // vec4 offset of the bottom rows / right columns: 64 / 4
const STAGE = STEP * LANES; // vec4s of one operand in one stage
const GROUP = 128u; // columns of a weight row per scale

// a_t[s * STAGE + k * LANES + i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// b_s[s * STAGE + k * LANES + j] holds the decoded weight at rows col0 + 4j .. 4j + 3, column k0 + k.
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

// The word holding codes k .. k + 7 of weight row n (k a multiple of 8), or 0 outside the weight.
fn load_word(n: u32, k: u32) -> u32 {
  if (n < params.n && k < params.k) {
    return weight[n * ((params.k + 7u) / 8u) + k / 8u];
  }
  return 0u;
}

// The scale of columns k .. k + 7 of weight row n, or 0 outside the weight.
fn load_scale(n: u32, k: u32) -> f32 {
  if (n < params.n && k < params.k) {
    return scales[n * ((params.k + GROUP - 1u) / GROUP) + k / GROUP];
  }
  return 0.0;
}

// Codes k .. k + 3 of a row (the low or the high half of its word, k % 8 telling which) as f32 (each
// nibble sign-extended by shifting it to the top of an i32 and back), times the group's scale, with
// the padding past K as zeros.
fn decode(word: u32, k: u32, scale: f32) -> vec4f {
  let shifts = select(vec4u(28u, 24u, 20u, 16u), vec4u(12u, 8u, 4u, 0u), k % 8u == 4u);
  let codes = vec4f((vec4i(bitcast<i32>(word)) << shifts) >> vec4u(28u));
  return select(vec4f(0.0), codes * scale, vec4u(k) + vec4u(0u, 1u, 2u, 3u) < vec4u(params.k));
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

fn stage_w(base: u32, row: u32, k: u32, v: vec4f) {
  let slot = base + k * LANES + row / 4u;
  b_s[slot][row % 4u] = v.x;
  b_s[slot + LANES][row % 4u] = v.y;
  b_s[slot + 2u * LANES][row % 4u] = v.z;
  b_s[slot + 3u * LANES][row % 4u] = v.w;
}

// One k of the block: four rows of a at top and bottom, four columns of the weight at left and
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

  // What this invocation stages per block: four consecutive k of one row of a and of the same
  // row of the weight's block (half a word of codes, with its group's scale).
  let a_row = lid / 2u;
  let a_k = (lid % 2u) * 4u;

  // Block 0 into stage 0; then each block's successor loads into registers while it is multiplied,
  // and goes to the other stage after. One barrier per block: the stage written during block t was
  // last read during block t - 1, which every invocation finished before the barrier ending it.
  let blocks = (params.k + STEP - 1u) / STEP;
  var next_a = load_a(row0 + a_row, a_k);
  var next_w = load_word(col0 + a_row, a_k);
  var next_s = load_scale(col0 + a_row, a_k);
  stage_t(0u, a_row, a_k, next_a);
  stage_w(0u, a_row, a_k, decode(next_w, a_k, next_s));
  workgroupBarrier();
  for (var t = 0u; t < blocks; t++) {
    let base = (t & 1u) * STAGE;
    let more = t + 1u < blocks;
    let k_next = (t + 1u) * STEP;
    if (more) {
      next_a = load_a(row0 + a_row, k_next + a_k);
      next_w = load_word(col0 + a_row, k_next + a_k);
      next_s = load_scale(col0 + a_row, k_next + a_k);
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
    if (more) {
      stage_t(STAGE - base, a_row, a_k, next_a);
      stage_w(STAGE - base, a_row, a_k, decode(next_w, k_next + a_k, next_s));
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
