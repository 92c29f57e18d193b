// scatter/index_copy: out[o, index[i], c] = src[o, i, c] for every (o, i, c) of src [outer, n, cols];
// an index outside [0, rows) is dropped, every other element of out is left as it is (read_write).
// One element per invocation; the workgroup grid may be folded into y when it exceeds 65,535.
struct Params {
  total: u32,  // outer * n * cols, source elements
  n: u32,      // indexLength, rows of src per block
  rows: u32,   // rows of out per block (< 2^31)
  cols: u32,   // values per row
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read> index: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.total) {
    return;
  }
  let c = i % params.cols;
  let block_row = i / params.cols;  // o * n + j
  let j = block_row % params.n;
  let o = block_row / params.n;
  // A negative index reinterpreted as u32 is at least 2^31 > rows, so one comparison drops both ends.
  let row = bitcast<u32>(index[j]);
  if (row >= params.rows) {
    return;
  }
  out[(o * params.rows + row) * params.cols + c] = src[i];
}
