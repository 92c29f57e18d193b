// The geometry, the two stages and the staging functions of the pipelined 128 x 128 dp4a tiles
// (q8row_dp4a_pipelined, q4g128_dp4a_pipelined and their fused forms; q8row_dp4a_pipelined.wgsl says
// the design): dp4a_tile128.wgsl's tile (256 invocations, 8 x 8 outputs each, K walked 16 words of
// four int8 codes a step), with two stages of a's block and the weight's, 2 x 2 x 512 vec4u, 32 KiB:
// over WebGPU's default maxComputeWorkgroupStorageSize of 16 KiB, so they run only on a device that
// allows 32 KiB (dp4a.ts refuses them elsewhere). The products read one stage while the next step is
// stored to the other. Needs the kernel's a and weight, load_a (dp4a_ops.wgsl) and load_weight
// (dp4a_q8_loads.wgsl or dp4a_q4_loads.wgsl).
const TILE = 128u;
const STEP = 16u; // words of four codes per step: 64 columns of K
const LANES = 32u; // vec4us across the tile: TILE / 4
const HALF = 16u; // vec4 offset of an invocation's bottom rows and right columns: 64 / 4
const STAGE_WORDS = 8u; // consecutive words of one row of a and of the weight each invocation loads per step

// a_t[s][w][i] holds word k0w + w of rows row0 + 4i .. 4i + 3 of a (four int8 codes each), and
// w_t[s][w][j] word k0w + w of weight rows col0 + 4j .. 4j + 3 as four int8 codes, for the step at
// word k0w in stage s = (k0w / STEP) % 2. Three-dimensional as tile128_decls.wgsl says why: a
// product's reads index the stage by the loop's st, the word by a constant and the lane by tx or ty.
var<workgroup> a_t: array<array<array<vec4u, LANES>, STEP>, 2>;
var<workgroup> w_t: array<array<array<vec4u, LANES>, STEP>, 2>;

// Words w .. w + 3 of a's block for row `row` of the tile, into stage s, transposed.
fn stage_a_in(s: u32, row: u32, w: u32, v: vec4u) {
  let i = row / 4u;
  let c = row % 4u;
  a_t[s][w][i][c] = v.x;
  a_t[s][w + 1u][i][c] = v.y;
  a_t[s][w + 2u][i][c] = v.z;
  a_t[s][w + 3u][i][c] = v.w;
}

// The same for the weight's block: words w .. w + 3 (each four int8 codes) of weight row `row` of the tile.
fn stage_w_in(s: u32, row: u32, w: u32, v: vec4u) {
  let i = row / 4u;
  let c = row % 4u;
  w_t[s][w][i][c] = v.x;
  w_t[s][w + 1u][i][c] = v.y;
  w_t[s][w + 2u][i][c] = v.z;
  w_t[s][w + 3u][i][c] = v.w;
}

// Four consecutive u32s of a or of the weight from index `at`, unchecked: the interior tiles' steps
// inside K (dp4a_interior_pipelined.wgsl).
fn a_words4(at: u32) -> vec4u {
  return vec4u(a[at], a[at + 1u], a[at + 2u], a[at + 3u]);
}

fn weight_words4(at: u32) -> vec4u {
  return vec4u(weight[at], weight[at + 1u], weight[at + 2u], weight[at + 3u]);
}

// Checked: words w .. w + 3 of row m of a (load_a: zeros outside a, codes past K masked), and words
// q .. q + 3 of weight row n (load_weight: zeros outside the weight; q8 or q4 words as the kernel's).
fn load_a4(m: u32, w: u32) -> vec4u {
  return vec4u(load_a(m, w), load_a(m, w + 1u), load_a(m, w + 2u), load_a(m, w + 3u));
}

fn load_weight4(n: u32, q: u32) -> vec4u {
  return vec4u(load_weight(n, q), load_weight(n, q + 1u), load_weight(n, q + 2u), load_weight(n, q + 3u));
}
