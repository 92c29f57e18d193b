// snake/rowgrid (measurement only): snake/kernel's maths with one workgroup per block of WG * PER
// quads of one channel row, so that the channel (and its alpha and reciprocal) is one per
// workgroup and no quad divides its index. Needs L % 4 == 0.
struct Params {
  n: u32,
  c: u32,
  l: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> alpha: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const WG = 256u;
const PER = 4u;
const EPS: f32 = 1e-9;

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let lq = params.l / 4u;
  let span = WG * PER;
  let per_row = (lq + span - 1u) / span;
  let w = wid.x + wid.y * groups.x;
  let row = w / per_row;
  if (row >= params.n / params.l) {
    return;
  }
  let c = row % params.c;
  let a = alpha[c];
  let r = 1.0 / (a + EPS);
  let base = row * lq;
  let j = (w % per_row) * span + lid;
  if (j + 3u * WG < lq) {
    let x0 = x[base + j];
    let x1 = x[base + j + WG];
    let x2 = x[base + j + 2u * WG];
    let x3 = x[base + j + 3u * WG];
    let s0 = sin(a * x0);
    let s1 = sin(a * x1);
    let s2 = sin(a * x2);
    let s3 = sin(a * x3);
    out[base + j] = x0 + r * (s0 * s0);
    out[base + j + WG] = x1 + r * (s1 * s1);
    out[base + j + 2u * WG] = x2 + r * (s2 * s2);
    out[base + j + 3u * WG] = x3 + r * (s3 * s3);
  } else {
    for (var k = 0u; k < PER; k++) {
      let q = j + k * WG;
      if (q < lq) {
        let v = x[base + q];
        let s = sin(a * v);
        out[base + q] = v + r * (s * s);
      }
    }
  }
}
