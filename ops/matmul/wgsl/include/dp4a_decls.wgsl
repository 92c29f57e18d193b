// The geometry and the stage of the dp4a tiles (q8row_dp4a, q4g128_dp4a): 64 x 64 outputs per
// workgroup of 128 invocations, 8 x 4 per invocation, K walked 128 codes (32 words of four int8
// codes) at a time, one q4 group per step. a_t and w_t are 8 KiB each: 16 KiB, WebGPU's default
// workgroup storage.
const TILE = 64u;
const STEP = 32u; // words of four codes staged per step: 128 columns of K
const LANES = 16u; // vec4us across one tile row: TILE / 4
const HALF = 8u; // vec4 offset of an invocation's bottom four rows: 32 / 4

// a_t[w * LANES + i] holds word k0w + w of rows row0 + 4i .. 4i + 3 of a (four int8 codes each);
// w_t[w * LANES + j] holds word k0w + w of weight rows col0 + 4j .. 4j + 3, as four int8 codes.
var<workgroup> a_t: array<vec4u, STEP * LANES>;
var<workgroup> w_t: array<vec4u, STEP * LANES>;

// Word w of row m of the packed activations (codes 4w .. 4w + 3), with the codes past K in a row's
// last word as zeros (so whatever the weight holds there adds nothing), or 0 outside a.
fn load_a(m: u32, w: u32) -> u32 {
  let words = (params.k + 3u) / 4u;
  if (m >= params.m || w >= words) {
    return 0u;
  }
  let word = a[m * words + w];
  let valid = params.k - 4u * w; // codes of this word inside K, >= 1
  return select(word, word & ((1u << (8u * valid)) - 1u), valid < 4u);
}

// The four i32 dot products of one word of a row of a with one word of each of four weight rows.
fn dot_row(a_word: u32, w_words: vec4u) -> vec4i {
  return vec4i(
    dot4I8Packed(a_word, w_words.x),
    dot4I8Packed(a_word, w_words.y),
    dot4I8Packed(a_word, w_words.z),
    dot4I8Packed(a_word, w_words.w),
  );
}
