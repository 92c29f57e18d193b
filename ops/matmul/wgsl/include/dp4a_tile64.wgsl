// The geometry and the stage of the 64 x 64 dp4a tiles (q8row_dp4a_tile64, q4g128_dp4a_tile64): 128
// invocations, 8 x 4 outputs each, K walked 128 codes (32 words of four int8 codes) at a time, one q4
// group per step. a_t and w_t are 8 KiB each: 16 KiB, WebGPU's default workgroup storage.
const TILE = 64u;
const STEP = 32u; // words of four codes staged per step: 128 columns of K
const LANES = 16u; // vec4us across the tile: TILE / 4
const HALF = 8u; // vec4 offset of an invocation's bottom four rows: 32 / 4
const STAGE_WORDS = 16u; // words of one row of a and of the weight each invocation stages per step

// a_t[w * LANES + i] holds word k0w + w of rows row0 + 4i .. 4i + 3 of a (four int8 codes each);
// w_t[w * LANES + j] holds word k0w + w of weight rows col0 + 4j .. 4j + 3, as four int8 codes.
var<workgroup> a_t: array<vec4u, STEP * LANES>;
var<workgroup> w_t: array<vec4u, STEP * LANES>;
