// matmul/f16storage: c = a @ b, a is [M, K] and b is [K, N], both IEEE binary16 row-major, c is
// [M, N] f32 row-major. Two halves per u32 word, the lower-indexed element in the low 16 bits (what
// unpack2x16float reads), element e of a matrix in word e / 2: a row straddles two words when its
// length is odd. The operands are bound as vec2u, pairs of words (four halves, 8 bytes).
//
// Storage only: the halves are decoded to f32 (exactly) as they are staged, and all arithmetic is
// f32 (f32 FMAs into f32 accumulators), so the kernel needs no shader-f16 and does not use the f16
// rate; what it saves over matmul/kernel is half of the operands' bytes.
//
// The tiling is matmul/kernel's (see kernel.wgsl for the design and why): each workgroup computes
// one 128 x 128 tile of c; each of its 256 invocations owns 8 x 8 outputs in sixteen named vec4
// accumulators, function-local variables of main, rows 4ty..4ty+3 and 64+4ty..64+4ty+3 and columns
// 4tx..4tx+3 and 64+4tx..64+4tx+3 for (tx, ty) = (lid % 16, lid / 16). K is walked 16 at a time
// through one stage of workgroup memory (16 KiB of f32: a's block transposed, b's as vec4s along a
// row): loads, stores, a barrier, the 16 k-steps written out inline in main, a barrier.
//
// Four halves of a row of a are read as one pair of words when K % 4 == 0 (each row then starts on
// an 8-byte boundary), element by element otherwise; likewise b and N % 4, and c is written a vec4
// at a time when N % 4 == 0. Every guard is in the staging loads and the final stores, none in the
// k-steps: loads outside a or b stage zeros (the padding half of an odd-length matrix's last word is
// never read) and stores outside c are skipped, so every M, N, K >= 1 works. Tiles beyond 65,535
// fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> a: array<vec2u>;
@group(0) @binding(1) var<storage, read> b: array<vec2u>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 16u; // columns of a (rows of b) per block
const LANES = 32u; // vec4s across 128 rows or columns
const HALF = 16u; // vec4 offset of the bottom rows / right columns: 64 / 4

// a_t[k * LANES + i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// b_s[k * LANES + j] holds b[k0 + k, col0 + 4j .. 4j + 3]; both decoded to f32.
var<workgroup> a_t: array<vec4f, STEP * LANES>;
var<workgroup> b_s: array<vec4f, STEP * LANES>;

// #include "load_a_f16.wgsl"

// #include "load_b_f16.wgsl"

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
  // a_row + 64), and four consecutive columns of two rows of b (b_k and b_k + 8).
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
