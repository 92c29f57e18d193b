// alibi/kernel: out[h, i, j] = slope[h] * (j - i - query_offset), [heads, L, S] row-major.
//
// Write-only, one vec4 per invocation. The integer distance is exact in f32 (all terms below
// 2^24) and is multiplied by the f32 slope once. When S % 4 == 0 the four elements share a row
// and their distances are d, d + 1, d + 2, d + 3; otherwise each finds its own row, and a partial
// last vec4 is written component by component.
struct Params {
  s: u32,
  rows_per_head: u32,  // L
  query_offset: i32,
  total: u32,          // heads * L * S
}

@group(0) @binding(0) var<storage, read> slopes: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

const WG = 256u;

fn bias(e: u32) -> f32 {
  let row = e / params.s;
  let j = i32(e % params.s);
  let i = i32(row % params.rows_per_head);
  return slopes[row / params.rows_per_head] * f32(j - i - params.query_offset);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let g = (wid.x + wid.y * groups.x) * WG + lid.x;
  let e = 4u * g;
  if (e >= params.total) {
    return;
  }
  if (params.s % 4u == 0u) {
    let row = e / params.s;
    let d = f32(i32(e % params.s) - i32(row % params.rows_per_head) - params.query_offset);
    out[g] = slopes[row / params.rows_per_head] * (vec4f(d) + vec4f(0.0, 1.0, 2.0, 3.0));
    return;
  }
  if (e + 3u < params.total) {
    out[g] = vec4f(bias(e), bias(e + 1u), bias(e + 2u), bias(e + 3u));
    return;
  }
  out[g].x = bias(e);
  if (e + 1u < params.total) {
    out[g].y = bias(e + 1u);
  }
  if (e + 2u < params.total) {
    out[g].z = bias(e + 2u);
  }
}
