// The constants and workgroup memory of matmul's f32 64 x 64 tiles (tile64.wgsl says the design):
// one stage of 16 columns of a's block, transposed, and of b's (or the weight's transpose), 2 x 256
// vec4s, 8 KiB.
const TILE_M = 64u;
const TILE_N = 64u;
const STEP = 16u; // columns of a (rows of b) per block
const LANES = 16u; // vec4s across 64 rows or columns
const HALF = 8u; // vec4 offset of the bottom rows: 32 / 4

// a_t[k][i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// b_s[k][j] holds b[k0 + k, col0 + 4j .. 4j + 3] (for a Linear weight [N, K], its transpose:
// weight[col0 + 4j .. 4j + 3, k0 + k]); two-dimensional as tile128_decls.wgsl says why.
var<workgroup> a_t: array<array<vec4f, LANES>, STEP>;
var<workgroup> b_s: array<array<vec4f, LANES>, STEP>;
