// matmul/kernel: c = a @ b, a is [M, K], b is [K, N], c is [M, N], all f32 row-major.
// The 128 x 128 tile, for problems large enough to keep a GPU busy with it (see tile64 otherwise).
//
// Each workgroup computes one 128 x 128 tile of c; each invocation of the 16 x 16 workgroup owns
// 8 x 8 outputs in sixteen named vec4 accumulators (an array of them may be spilled to memory).
// Invocation (tx, ty) owns rows 4ty..4ty+3 ("top", acc0..acc3) and 64+4ty..64+4ty+3 ("bottom",
// acc4..acc7) of the tile, and columns 4tx..4tx+3 ("left") and 64+4tx..64+4tx+3 ("right"), so that
// neighbouring invocations read neighbouring vec4s of workgroup memory and write neighbouring vec4s
// of c. K is walked 8 at a time: a's 128 x 8 block is staged transposed in workgroup memory, so one
// vec4 read gives an invocation four of its rows at one k, and b's 8 x 128 block is staged as vec4s
// along a row. Loads outside a or b stage zeros and stores outside c are skipped, so every
// M, N, K >= 1 works. Tiles beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x,
// bound-checked.
struct Params {
  m: u32,
  n: u32,
  k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const TILE = 128u;
const STEP = 8u; // columns of a (rows of b) staged at a time
const LANES = 32u; // vec4s across one tile row: TILE / 4
const HALF = 16u; // vec4 offset of the bottom rows / right columns: 64 / 4

// a_t[k * LANES + i] holds a[row0 + 4i .. 4i + 3, k0 + k]; b_rows[k * LANES + j] holds b[k0 + k, col0 + 4j .. 4j + 3].
var<workgroup> a_t: array<vec4f, STEP * LANES>;
var<workgroup> b_rows: array<vec4f, STEP * LANES>;

fn load_a(row: u32, k: u32) -> f32 {
  if (row < params.m && k < params.k) {
    return a[row * params.k + k];
  }
  return 0.0;
}

fn load_b(k: u32, col: u32) -> f32 {
  if (k < params.k && col < params.n) {
    return b[k * params.n + col];
  }
  return 0.0;
}

fn store_c(row: u32, col: u32, v: vec4f) {
  if (row >= params.m) {
    return;
  }
  for (var j = 0u; j < 4u; j++) {
    if (col + j < params.n) {
      c[row * params.n + col + j] = v[j];
    }
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let tiles_n = (params.n + TILE - 1u) / TILE;
  let tiles = ((params.m + TILE - 1u) / TILE) * tiles_n;
  let tile = wid.x + wid.y * groups.x;
  if (tile >= tiles) {
    return;
  }
  let row0 = (tile / tiles_n) * TILE;
  let col0 = (tile % tiles_n) * TILE;
  let tx = lid % HALF;
  let ty = lid / HALF;

  // What this invocation stages: four consecutive k of one row of a, and one vec4 of one row of b.
  let a_row = lid / 2u;
  let a_k = (lid % 2u) * 4u;
  let b_k = lid / LANES;
  let b_col = (lid % LANES) * 4u;

  var acc0_left = vec4f(0.0);
  var acc0_right = vec4f(0.0);
  var acc1_left = vec4f(0.0);
  var acc1_right = vec4f(0.0);
  var acc2_left = vec4f(0.0);
  var acc2_right = vec4f(0.0);
  var acc3_left = vec4f(0.0);
  var acc3_right = vec4f(0.0);
  var acc4_left = vec4f(0.0);
  var acc4_right = vec4f(0.0);
  var acc5_left = vec4f(0.0);
  var acc5_right = vec4f(0.0);
  var acc6_left = vec4f(0.0);
  var acc6_right = vec4f(0.0);
  var acc7_left = vec4f(0.0);
  var acc7_right = vec4f(0.0);

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    for (var j = 0u; j < 4u; j++) {
      a_t[(a_k + j) * LANES + a_row / 4u][a_row % 4u] = load_a(row0 + a_row, k0 + a_k + j);
    }
    let col = col0 + b_col;
    b_rows[b_k * LANES + b_col / 4u] = vec4f(
      load_b(k0 + b_k, col),
      load_b(k0 + b_k, col + 1u),
      load_b(k0 + b_k, col + 2u),
      load_b(k0 + b_k, col + 3u),
    );
    workgroupBarrier();
    for (var k = 0u; k < STEP; k++) {
      let top = a_t[k * LANES + ty];
      let bottom = a_t[k * LANES + HALF + ty];
      let left = b_rows[k * LANES + tx];
      let right = b_rows[k * LANES + HALF + tx];
      acc0_left += top.x * left;
      acc0_right += top.x * right;
      acc1_left += top.y * left;
      acc1_right += top.y * right;
      acc2_left += top.z * left;
      acc2_right += top.z * right;
      acc3_left += top.w * left;
      acc3_right += top.w * right;
      acc4_left += bottom.x * left;
      acc4_right += bottom.x * right;
      acc5_left += bottom.y * left;
      acc5_right += bottom.y * right;
      acc6_left += bottom.z * left;
      acc6_right += bottom.z * right;
      acc7_left += bottom.w * left;
      acc7_right += bottom.w * right;
    }
    workgroupBarrier();
  }

  let top_row = row0 + ty * 4u;
  let bottom_row = top_row + 64u;
  let left_col = col0 + tx * 4u;
  let right_col = left_col + 64u;
  store_c(top_row, left_col, acc0_left);
  store_c(top_row, right_col, acc0_right);
  store_c(top_row + 1u, left_col, acc1_left);
  store_c(top_row + 1u, right_col, acc1_right);
  store_c(top_row + 2u, left_col, acc2_left);
  store_c(top_row + 2u, right_col, acc2_right);
  store_c(top_row + 3u, left_col, acc3_left);
  store_c(top_row + 3u, right_col, acc3_right);
  store_c(bottom_row, left_col, acc4_left);
  store_c(bottom_row, right_col, acc4_right);
  store_c(bottom_row + 1u, left_col, acc5_left);
  store_c(bottom_row + 1u, right_col, acc5_right);
  store_c(bottom_row + 2u, left_col, acc6_left);
  store_c(bottom_row + 2u, right_col, acc6_right);
  store_c(bottom_row + 3u, left_col, acc7_left);
  store_c(bottom_row + 3u, right_col, acc7_right);
}
