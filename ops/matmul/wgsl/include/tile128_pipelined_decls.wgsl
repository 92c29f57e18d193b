// The constants and workgroup memory of matmul's pipelined 128 x 128 tiles (kernel_pipelined,
// linear_pipelined; kernel_pipelined.wgsl says the design): two stages, each a block of 16 columns
// of a, transposed, and of b (or the weight's transpose), 2 x 2 x 512 vec4s, 32 KiB: over WebGPU's
// default maxComputeWorkgroupStorageSize of 16 KiB, so the plans take these kernels only on a device
// that allows 32 KiB. The k-steps read one stage while the next block is stored to the other.
const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 16u; // columns of a (rows of b) per block
const LANES = 32u; // vec4s across 128 rows or columns
const HALF = 16u; // vec4 offset of the bottom rows / right columns: 64 / 4

// a_t[s][k][i] holds a[row0 + 4i .. 4i + 3, k0 + k] of the block in stage s; b_s[s][k][j] holds
// b[k0 + k, col0 + 4j .. 4j + 3] (for a Linear weight [N, K], weight[col0 + 4j .. 4j + 3, k0 + k]).
// Block k0 / STEP is in stage (k0 / STEP) % 2. Multi-dimensional as tile128_decls.wgsl says why.
var<workgroup> a_t: array<array<array<vec4f, LANES>, STEP>, 2>;
var<workgroup> b_s: array<array<array<vec4f, LANES>, STEP>, 2>;

// gemm_stage_t.wgsl's stage_t into stage s: four consecutive k of one row of a, transposed.
fn stage_a_in(s: u32, row: u32, k: u32, v: vec4f) {
  let i = row / 4u;
  let c = row % 4u;
  a_t[s][k][i][c] = v.x;
  a_t[s][k + 1u][i][c] = v.y;
  a_t[s][k + 2u][i][c] = v.z;
  a_t[s][k + 3u][i][c] = v.w;
}

// stage_w.wgsl's stage_w into stage s: four consecutive k of one weight row, transposed into b's layout.
fn stage_w_in(s: u32, row: u32, k: u32, v: vec4f) {
  let i = row / 4u;
  let c = row % 4u;
  b_s[s][k][i][c] = v.x;
  b_s[s][k + 1u][i][c] = v.y;
  b_s[s][k + 2u][i][c] = v.z;
  b_s[s][k + 3u][i][c] = v.w;
}
