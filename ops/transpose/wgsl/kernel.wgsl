// transpose/kernel: out[c, r] = x[r, c], x is [rows, cols] row-major and out is [cols, rows].
//
// Each workgroup turns one 32x32 tile through workgroup memory: it reads 32 consecutive elements
// from each of up to 32 rows of x, and writes 32 consecutive elements into each of up to 32 rows
// of out, so neither side strides through memory. A tile row holds 33 floats: reading a column of
// the tile then touches 32 different banks. 32x8 invocations move four elements each way.
// Tiles are numbered row-major over x; the grid may be folded into y beyond 65,535 tiles.
struct Params {
  rows: u32,  // rows of x
  cols: u32,  // columns of x
}

const TILE: u32 = 32u;
const PADDED: u32 = 33u;    // TILE + 1
const PASS_ROWS: u32 = 8u;  // rows covered per pass by the 32x8 invocations

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> tile: array<f32, 1056>;  // TILE * PADDED

@compute @workgroup_size(32, 8)
fn main(
  @builtin(local_invocation_id) local: vec3u,
  @builtin(workgroup_id) group: vec3u,
  @builtin(num_workgroups) groups: vec3u,
) {
  let tiles_across = (params.cols + TILE - 1u) / TILE;
  let tiles_down = (params.rows + TILE - 1u) / TILE;
  let t = group.x + group.y * groups.x;
  // A folded grid's surplus tiles have no work (their rows would start past the end). The test is
  // the same for every invocation of the workgroup, so the barrier below stays uniform.
  if (t >= tiles_across * tiles_down) {
    return;
  }
  let row0 = (t / tiles_across) * TILE;
  let col0 = (t % tiles_across) * TILE;

  for (var k = 0u; k < TILE; k += PASS_ROWS) {
    let r = row0 + local.y + k;
    let c = col0 + local.x;
    if (r < params.rows && c < params.cols) {
      tile[(local.y + k) * PADDED + local.x] = x[r * params.cols + c];
    }
  }
  workgroupBarrier();
  for (var k = 0u; k < TILE; k += PASS_ROWS) {
    let c = col0 + local.y + k;  // the row of out
    let r = row0 + local.x;      // the column of out
    if (c < params.cols && r < params.rows) {
      out[c * params.rows + r] = tile[local.x * PADDED + local.y + k];
    }
  }
}
