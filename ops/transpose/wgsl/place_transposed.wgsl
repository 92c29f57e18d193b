// transpose/place_transposed: a transposed block of columns into a wider matrix,
// c[m, n0 + j] = ct[j, m] for ct [block_n, m] and c [m, n] (the other columns of c untouched): the
// output of a product computed transposed (C^T = W X^T), placed into its columns. Through 16 x 16
// tiles of workgroup memory (rows padded to 17 floats against bank conflicts), so that reads run
// along the rows of ct and writes along the rows of c; the grid is ceil(m / 16) x ceil(block_n / 16).
struct P { m: u32, block_n: u32, n: u32, n0: u32 }
@group(0) @binding(0) var<storage, read> ct: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
var<workgroup> tile: array<f32, 272>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let j = wid.y * 16u + lid.y;
  let m = wid.x * 16u + lid.x;
  if (j < p.block_n && m < p.m) { tile[lid.y * 17u + lid.x] = ct[j * p.m + m]; }
  workgroupBarrier();
  let tm = wid.x * 16u + lid.y;
  let tj = wid.y * 16u + lid.x;
  if (tj < p.block_n && tm < p.m) { c[tm * p.n + p.n0 + tj] = tile[lid.x * 17u + lid.y]; }
}