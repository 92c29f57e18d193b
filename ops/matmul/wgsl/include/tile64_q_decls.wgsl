// The geometry and the (single) stages of the 64 x 64 quantized tiles (q8row_tile64, q4g128_tile64
// and their fused kernels).
const TILE = 64u;
const STEP = 16u; // columns of a and of the weight staged at a time
const LANES = 16u; // vec4s across one tile row: TILE / 4

// a_t[k][i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// w_t[k][j] holds the decoded weight at rows col0 + 4j .. 4j + 3, column k0 + k.
var<workgroup> a_t: array<array<vec4f, LANES>, STEP>;
var<workgroup> w_t: array<array<vec4f, LANES>, STEP>;
