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

// #include "params.wgsl"

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

// #include "acc128.wgsl"

// #include "load_a.wgsl"

// #include "q4_load_word_scale.wgsl"

// Codes k .. k + 3 of a row (the low or the high half of its word, k % 8 telling which) as f32 (each
// nibble sign-extended by shifting it to the top of an i32 and back), times the group's scale, with
// the padding past K as zeros.
fn decode(word: u32, k: u32, scale: f32) -> vec4f {
  let shifts = select(vec4u(28u, 24u, 20u, 16u), vec4u(12u, 8u, 4u, 0u), k % 8u == 4u);
  let codes = vec4f((vec4i(bitcast<i32>(word)) << shifts) >> vec4u(28u));
  return select(vec4f(0.0), codes * scale, vec4u(k) + vec4u(0u, 1u, 2u, 3u) < vec4u(params.k));
}

// #include "store_c.wgsl"

// #include "stage_t.wgsl"

// #include "stage_w.wgsl"

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
// #include "k_steps8.wgsl"
    if (more) {
      stage_t(STAGE - base, a_row, a_k, next_a);
      stage_w(STAGE - base, a_row, a_k, decode(next_w, k_next + a_k, next_s));
    }
    workgroupBarrier();
  }

// #include "store_acc128.wgsl"
}
