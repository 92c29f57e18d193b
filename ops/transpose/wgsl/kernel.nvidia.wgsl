// transpose/kernel.nvidia: out[c, r] = x[r, c], x is [rows, cols] row-major and out is [cols, rows].
//
// Tuned for bandwidth: 64x64 tiles through workgroup memory, 256 invocations moving 16 elements
// each way. An invocation reads four vec4s along rows of x (16 invocations span a 64-float tile
// row, so a warp reads two whole 256-byte row pieces per load), all four issued before any is
// used, and writes four vec4s along rows of out, each gathered from four tile rows.
// Tiles are dealt to workgroups in a grid-stride loop over however many workgroups the dispatch
// has (x * y), so the host never folds the grid; mod.ts dispatches min(tiles, 65,535).
//
// The tile is 64 x 64 floats with no padding (16 KiB, the default maxComputeWorkgroupStorageSize);
// instead, element (r, c) sits at column c ^ h(r, c) of tile row r, h < 32, which makes both the
// row-wise writes and the column-wise reads of a warp hit 32 different banks.
//
// vec4 loads and stores need rows and cols to be multiples of 4 (every vec4 then lies inside one
// row of x and of out, 16-byte aligned). Otherwise the same tiles move one element at a time,
// each bound-checked: nothing is ever written past element rows * cols - 1.
struct Params {
  rows: u32,  // rows of x
  cols: u32,  // columns of x
}

const TILE: u32 = 64u;
const LANES: u32 = 16u;  // invocations across one tile row: 16 vec4s = 64 floats
const STEP: u32 = 16u;   // tile rows one pass covers: 256 invocations / LANES

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> tile: array<f32, 4096>;  // TILE * TILE

// Where tile element (r, c) is kept. A warp writes tile rows a and a + 1 (a even) at columns
// 4 * lane + j, and reads tile rows 4 * lane + j at columns b and b + 1 (b even): with
// h = 2 * ((r / 4 ^ r % 2) % 16) + c / 32 both land on 32 distinct banks, and c ^ h stays in the
// same half of the row as c, so each row is a permutation of itself.
fn slot(r: u32, c: u32) -> u32 {
  let h = ((((r >> 2u) ^ (r & 1u)) & 15u) << 1u) | (c >> 5u);
  return r * TILE + (c ^ h);
}

@compute @workgroup_size(256)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) group: vec3u,
  @builtin(num_workgroups) groups: vec3u,
) {
  let rows = params.rows;
  let cols = params.cols;
  let across = (cols + TILE - 1u) / TILE;
  let tiles = across * ((rows + TILE - 1u) / TILE);
  let whole = (rows & 3u) == 0u && (cols & 3u) == 0u;
  let lane = lid % LANES;  // loading: columns 4 * lane.. of the tile; storing: its rows 4 * lane..
  let line = lid / LANES;  // loading: tile row line + k * STEP; storing: tile column line + k * STEP

  // The loop bounds depend only on uniform values, so every invocation reaches the barriers.
  for (var t = group.x + group.y * groups.x; t < tiles; t += groups.x * groups.y) {
    let row0 = (t / across) * TILE;
    let col0 = (t % across) * TILE;

    var v: array<vec4f, 4>;
    for (var k = 0u; k < 4u; k++) {
      let r = row0 + line + k * STEP;
      let c = col0 + 4u * lane;
      let i = r * cols + c;
      v[k] = vec4f(0.0);
      if (whole) {
        if (r < rows && c < cols) {
          v[k] = x[i >> 2u];
        }
      } else {
        for (var j = 0u; j < 4u; j++) {
          if (r < rows && c + j < cols) {
            v[k][j] = x[(i + j) >> 2u][(i + j) & 3u];
          }
        }
      }
    }
    for (var k = 0u; k < 4u; k++) {
      for (var j = 0u; j < 4u; j++) {
        tile[slot(line + k * STEP, 4u * lane + j)] = v[k][j];
      }
    }
    workgroupBarrier();

    for (var k = 0u; k < 4u; k++) {
      let tc = line + k * STEP;
      let c = col0 + tc;         // the row of out
      let r = row0 + 4u * lane;  // its first of four columns
      let w = vec4f(
        tile[slot(4u * lane, tc)],
        tile[slot(4u * lane + 1u, tc)],
        tile[slot(4u * lane + 2u, tc)],
        tile[slot(4u * lane + 3u, tc)],
      );
      let i = c * rows + r;
      if (whole) {
        if (c < cols && r < rows) {
          out[i >> 2u] = w;
        }
      } else {
        for (var j = 0u; j < 4u; j++) {
          if (c < cols && r + j < rows) {
            out[(i + j) >> 2u][(i + j) & 3u] = w[j];
          }
        }
      }
    }
    // The next tile overwrites the tile only after every invocation has read this one.
    workgroupBarrier();
  }
}
