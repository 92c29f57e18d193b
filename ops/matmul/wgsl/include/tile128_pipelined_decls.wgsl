// The constants and workgroup memory of matmul's pipelined 128 x 128 tiles (kernel_pipelined,
// linear_pipelined; kernel_pipelined.wgsl says the design): two stages of 8 columns of a's block,
// transposed, and of b's (or the weight's transpose), 2 x 2 x 256 vec4s, 16 KiB (WebGPU's default
// maxComputeWorkgroupStorageSize), the k-steps reading one stage while the next block is stored to
// the other.
const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 8u; // columns of a (rows of b) per block
const LANES = 32u; // vec4s across 128 rows or columns
const HALF = 16u; // vec4 offset of the bottom rows / right columns: 64 / 4

// Stage s of a_t holds, at [s * STEP * LANES + k * LANES + i], a[row0 + 4i .. 4i + 3, k0 + k];
// stage s of b_s, at [s * STEP * LANES + k * LANES + j], b[k0 + k, col0 + 4j .. 4j + 3] (for a Linear
// weight [N, K], weight[col0 + 4j .. 4j + 3, k0 + k]). Block k0 / STEP is in stage (k0 / STEP) % 2.
var<workgroup> a_t: array<vec4f, 2u * STEP * LANES>;
var<workgroup> b_s: array<vec4f, 2u * STEP * LANES>;
