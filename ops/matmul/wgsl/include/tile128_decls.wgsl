// The constants and workgroup memory of matmul's 128 x 128 tiles (kernel.wgsl says the design and
// why): one stage of 16 columns of a's block, transposed, and of b's (or the weight's transpose),
// 2 x 512 vec4s, 16 KiB (WebGPU's default maxComputeWorkgroupStorageSize).
const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 16u; // columns of a (rows of b) per block
const LANES = 32u; // vec4s across 128 rows or columns
const HALF = 16u; // vec4 offset of the bottom rows / right columns: 64 / 4

// a_t[k][i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// b_s[k][j] holds b[k0 + k, col0 + 4j .. 4j + 3] (for a Linear weight [N, K], its transpose:
// weight[col0 + 4j .. 4j + 3, k0 + k]), as f32 whatever the operands are stored as. Two-dimensional,
// so that a k-step's reads index the outer array by a constant and the inner one by tx or ty alone
// (WGSL keeps every index in range: this way the kernel's clamp is one per thread, not one per read).
var<workgroup> a_t: array<array<vec4f, LANES>, STEP>;
var<workgroup> b_s: array<array<vec4f, LANES>, STEP>;
