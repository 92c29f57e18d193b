// matmul/tile64: c = a @ b, a is [M, K], b is [K, N], c is [M, N], all f32 row-major.
// The 64 x 64 tile, for problems too small to keep a GPU busy with 128 x 128 tiles.
//
// Each workgroup computes one 64 x 64 tile of c. Invocation (tx, ty) of the 16 x 16 workgroup owns
// the 4 x 4 outputs at rows 4ty..4ty+3 and columns 4tx..4tx+3 of the tile, in four named vec4
// accumulators (one per row). K is walked 16 at a time: a's 64 x 16 block is staged transposed in
// workgroup memory, so one vec4 read gives an invocation its four rows at one k, and b's 16 x 64
// block is staged as vec4s along a row. Loads outside a or b stage zeros and stores outside c are
// skipped, so every M, N, K >= 1 works. Tiles beyond 65,535 fold into y:
// tile = id.x + id.y * num_workgroups.x, bound-checked.
struct Params {
  m: u32,
  n: u32,
  k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const TILE = 64u;
const STEP = 16u; // columns of a (rows of b) staged at a time
const LANES = 16u; // vec4s across one tile row: TILE / 4

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
  let tx = lid % LANES;
  let ty = lid / LANES;

  // What this invocation stages: four consecutive k of one row of a, and one vec4 of one row of b.
  let a_row = lid / 4u;
  let a_k = (lid % 4u) * 4u;
  let b_k = lid / LANES;
  let b_col = (lid % LANES) * 4u;

  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);

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
      let av = a_t[k * LANES + ty];
      let bv = b_rows[k * LANES + tx];
      acc0 += av.x * bv;
      acc1 += av.y * bv;
      acc2 += av.z * bv;
      acc3 += av.w * bv;
    }
    workgroupBarrier();
  }

  let row = row0 + ty * 4u;
  let col = col0 + tx * 4u;
  store_c(row, col, acc0);
  store_c(row + 1u, col, acc1);
  store_c(row + 2u, col, acc2);
  store_c(row + 3u, col, acc3);
}
