// A GEMM c = a @ b whose operands and output the including kernel reads and writes through its own
// functions (stft/kernel, stft/inverse, mel/kernel), everything else written once here: the tile's
// constants, workgroup memory and main. Each workgroup computes a 64 x 64 tile of c; each of its 128
// invocations owns 8 x 4 outputs in eight named vec4 accumulators. Invocation (tx, ty) =
// (lid % 16, lid / 16) owns rows 4ty..4ty+3 and 32+4ty..32+4ty+3 and columns 4tx..4tx+3. K is walked
// 16 at a time through workgroup memory (a's block transposed, b's block as vec4s along a row;
// 8 KiB), the 16 k-steps written out inline: matmul/tile64's design (see there), and the same body
// of main (gemm64_main_body.wgsl) after a setup whose text differs from tile64's in two places (the
// tile count inline, b_lane before b_col), left as it was measured. The including kernel declares
// Params and params with m and n (the rows and columns of c) and k (the GEMM's depth), and the
// gathering functions: load_a(row, k) (four consecutive k of row `row` of a) and load_b(k, col) (four
// consecutive columns of row k of b, col a multiple of 4), each giving zeros outside its matrix, and
// store_c(row, col, v) (four consecutive columns from col, those outside c skipped). Tiles beyond
// 65,535 fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.
const TILE_M = 64u;
const TILE_N = 64u;
const STEP = 16u;
const LANES = 16u;
const HALF = 8u;

var<workgroup> a_t: array<array<vec4f, LANES>, STEP>;
var<workgroup> b_s: array<array<vec4f, LANES>, STEP>;

// #include "gemm_stage_t.wgsl"

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
  let b_lane = lid % LANES;
  let b_col = col0 + (lid % LANES) * 4u;

// #include "gemm64_main_body.wgsl"
}
