// A GEMM c = a @ b whose operands and output the including kernel reads and writes through its own
// functions (stft/kernel, stft/inverse, mel/kernel), everything else written once here. Each
// workgroup computes a 64 x 64 tile of c; each of its 128 invocations owns 8 x 4 outputs in eight
// named vec4 accumulators.
// Invocation (tx, ty) = (lid % 16, lid / 16) owns rows 4ty..4ty+3 and 32+4ty..32+4ty+3 and columns
// 4tx..4tx+3. K is walked 16 at a time through workgroup memory (a's block transposed, b's block as
// vec4s along a row; 8 KiB), the 16 k-steps written out inline (gemm64_k_steps.wgsl): matmul/tile64's
// design (see there), with the operands gathered by the including kernel's load_a(row, k) (four
// consecutive k of row `row` of a) and load_b(k, col) (four consecutive columns of row k of b, col a
// multiple of 4), each giving zeros outside its matrix, and the outputs written by its
// store_c(row, col, v) (four consecutive columns from col). The including kernel declares Params
// with m and n (the rows and columns of c) and k (the GEMM's depth). Tiles beyond 65,535 fold into
// y: tile = id.x + id.y * num_workgroups.x, bound-checked.
const TILE_M = 64u;
const TILE_N = 64u;
const STEP = 16u;
const LANES = 16u;
const HALF = 8u;

var<workgroup> a_t: array<vec4f, STEP * LANES>;
var<workgroup> b_s: array<vec4f, STEP * LANES>;

// #include "gemm64_stage_t.wgsl"

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let tiles_n = (params.n + TILE_N - 1u) / TILE_N;
  let tile = wid.x + wid.y * groups.x;
  if (tile >= ((params.m + TILE_M - 1u) / TILE_M) * tiles_n) {
    return;
  }
  let row0 = (tile / tiles_n) * TILE_M;
  let col0 = (tile % tiles_n) * TILE_N;
  let tx = lid % LANES;
  let ty = lid / LANES;

  // What this invocation stages per block: four consecutive k of two rows of a (a_row and
  // a_row + 32), and one vec4 of two rows of b (b_k and b_k + 8).
  let a_row = lid / 4u;
  let a_k = (lid % 4u) * 4u;
  let b_k = lid / LANES;
  let b_slot = b_k * LANES + lid % LANES;
  let b_col = col0 + (lid % LANES) * 4u;

  // The 8 x 4 outputs of this invocation, one vec4 per row: acc0-3 the top rows, acc4-7 the bottom ones.
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
  var acc4 = vec4f(0.0);
  var acc5 = vec4f(0.0);
  var acc6 = vec4f(0.0);
  var acc7 = vec4f(0.0);

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    // All four loads before any store, so that they are in flight together.
    let a_top = load_a(row0 + a_row, k0 + a_k);
    let a_bottom = load_a(row0 + a_row + 32u, k0 + a_k);
    let b_top = load_b(k0 + b_k, b_col);
    let b_bottom = load_b(k0 + b_k + 8u, b_col);
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 32u, a_k, a_bottom);
    b_s[b_slot] = b_top;
    b_s[b_slot + 8u * LANES] = b_bottom;
    workgroupBarrier();
// #include "gemm64_k_steps.wgsl"
    // The next block's stores wait until every invocation has read this one.
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
