// transpose/place: a block of columns into a wider matrix, c[m, n0 + j] = blk[m, j] for blk
// [m, block_n] and c [m, n] (the other columns of c untouched): the output of one row block of a weight split
// across bindings, placed into its columns. One invocation per element, 64 columns by one row a
// workgroup (the grid's y is the rows).
struct P { m: u32, block_n: u32, n: u32, n0: u32 }
@group(0) @binding(0) var<storage, read> blk: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let j = g.x;
  let m = g.y;
  if (j >= p.block_n || m >= p.m) { return; }
  c[m * p.n + p.n0 + j] = blk[m * p.block_n + j];
}