// rmsnorm/residual: the residual add and the RMSNorm after it, as a transformer layer runs them:
// x[row0 + n] += delta[row0 + n] (when `add` is 1), then
// out[n] = x[row0 + n] / sqrt(mean(x[row0 + n]^2) + eps) * weight (HF's LlamaRMSNorm), for the `rows`
// rows from row0 (one workgroup each), out's rows counted from 0 (so the last row of a chunk alone
// can be normalised for a head). x and delta are [row0 + rows, hidden], out [rows, hidden].
//
// Each invocation holds its PER = ceil(hidden / 256) elements in registers (a loop of constant
// length: PER is a pipeline constant), so the row is read once and its loads are all issued before
// the first is needed; the sum of squares is reduced by a tree of halvings through workgroup memory.
struct P { hidden: u32, add: u32, eps: f32, row0: u32 }
override PER: u32 = 1u; // elements of a row each invocation holds: ceil(cols / 256), at most MAX_PER
const MAX_PER = 32u; // the array's declared length (a function-scope array cannot take an override's)
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> delta: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: P;
var<workgroup> red: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let base = (p.row0 + wid.x) * p.hidden;
  var v: array<f32, MAX_PER>;
  var ss = 0.0;
  for (var k = 0u; k < PER; k++) {
    let c = li + 256u * k;
    if (c < p.hidden) {
      var e = x[base + c];
      if (p.add != 0u) {
        e += delta[base + c];
        x[base + c] = e;
      }
      v[k] = e;
      ss += e * e;
    }
  }
  red[li] = ss;
  workgroupBarrier();
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (li < s) { red[li] += red[li + s]; }
    workgroupBarrier();
  }
  let inv = inverseSqrt(red[0] / f32(p.hidden) + p.eps);
  for (var k = 0u; k < PER; k++) {
    let c = li + 256u * k;
    if (c < p.hidden) { out[wid.x * p.hidden + c] = v[k] * inv * weight[c]; }
  }
}