// moe/gather: out[t] = sum over r of gates[t, r] * y[token_slot[t, r]], dropped (-1) slots skipped.
//
// D % 4 == 0: one invocation per vec4 of out, the k rows of y read as vec4s (a warp reads
// consecutive vec4s of each row). Otherwise one invocation per vec4 of the flat output, each
// element finding its own token; a partial last vec4 is written component by component.
struct Params {
  tokens: u32,
  k: u32,
  d: u32,
  total: u32,  // tokens * d
}

@group(0) @binding(0) var<storage, read> y: array<vec4f>;
@group(0) @binding(1) var<storage, read> token_slot: array<i32>;
@group(0) @binding(2) var<storage, read> gates: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(4) var<uniform> params: Params;

const WG = 256u;

fn element(e: u32) -> f32 {
  let t = e / params.d;
  let col = e % params.d;
  var acc = 0.0;
  for (var r = 0u; r < params.k; r++) {
    let slot = token_slot[t * params.k + r];
    if (slot >= 0) {
      let i = u32(slot) * params.d + col;
      acc += gates[t * params.k + r] * y[i >> 2u][i & 3u];
    }
  }
  return acc;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let g = (wid.x + wid.y * groups.x) * WG + lid.x;
  let e = 4u * g;
  if (e >= params.total) {
    return;
  }
  if (params.d % 4u == 0u) {
    let dq = params.d / 4u;
    let t = g / dq;
    let q = g % dq;
    var acc = vec4f(0.0);
    for (var r = 0u; r < params.k; r++) {
      let slot = token_slot[t * params.k + r];
      if (slot >= 0) {
        acc += gates[t * params.k + r] * y[u32(slot) * dq + q];
      }
    }
    out[g] = acc;
    return;
  }
  if (e + 3u < params.total) {
    out[g] = vec4f(element(e), element(e + 1u), element(e + 2u), element(e + 3u));
    return;
  }
  out[g].x = element(e);
  if (e + 1u < params.total) {
    out[g].y = element(e + 1u);
  }
  if (e + 2u < params.total) {
    out[g].z = element(e + 2u);
  }
}
