// The geometry and the stage of the 128 x 128 dp4a tiles (q8row_dp4a, q4g128_dp4a): 256 invocations,
// 8 x 8 outputs each, K walked 64 codes (16 words of four int8 codes) at a time, two steps per q4
// group. a_t and w_t are 8 KiB each: 16 KiB, WebGPU's default workgroup storage.
const TILE = 128u;
const STEP = 16u; // words of four codes staged per step: 64 columns of K
const LANES = 32u; // vec4us across the tile: TILE / 4
const HALF = 16u; // vec4 offset of an invocation's bottom rows and right columns: 64 / 4
const STAGE_WORDS = 8u; // words of one row of a and of the weight each invocation stages per step

// a_t[w * LANES + i] holds word k0w + w of rows row0 + 4i .. 4i + 3 of a (four int8 codes each);
// w_t[w * LANES + j] holds word k0w + w of weight rows col0 + 4j .. 4j + 3, as four int8 codes.
var<workgroup> a_t: array<vec4u, STEP * LANES>;
var<workgroup> w_t: array<vec4u, STEP * LANES>;
