// rope/kernel: rotary position embedding of x [tokens, heads, headDim], adjacent pairs (2i, 2i+1).
//
// headDim % 4 == 0 (every head row starts on a vec4): one invocation per (token, group of HPI
// heads, vec4 q of a head row). It finds the two pairs' angles once (p * invFreq[i], or row p of
// the angle cache when p is an integer inside it), then reads the HPI heads' vec4s at column q,
// all loads before the first store, and writes each turned (heads in [headOffset, headEnd)) or
// copied. Consecutive invocations take consecutive vec4s of one head row, so a warp reads and
// writes whole rows; each element is read once and written once.
//
// headDim % 4 == 2: one invocation per vec4 of the flat array, each element finding its own head,
// pair and partner (the vec4 may straddle two heads or tokens); the last vec4 may be half full and
// is written component by component.
struct Params {
  tokens: u32,
  heads: u32,
  head_dim: u32,
  head_offset: u32,
  head_end: u32,
  cache_length: u32,
  offset: f32,
  attention_factor: f32,
  chunks: u32,     // ceil(heads / HPI), aligned path
  total: u32,      // tokens * heads * headDim
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> positions: array<f32>;
@group(0) @binding(2) var<storage, read> inv_freq: array<f32>;
@group(0) @binding(3) var<storage, read> rope_cache: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(5) var<uniform> params: Params;

const WG = 256u;
const HPI = 8u;  // heads per invocation (mod.ts sizes the grid with the same number)

// #include "turn.wgsl"

// (cos, sin) of pair i at position p, times the attention factor.
fn pair_turn(p: f32, i: u32) -> vec2f {
  var angle = p * inv_freq[i];
  let row = u32(max(p, 0.0));
  if (p >= 0.0 && f32(row) == p && row < params.cache_length) {
    angle = rope_cache[row * (params.head_dim / 2u) + i];
  }
  return turn(angle) * params.attention_factor;
}

fn rotated(h: u32) -> bool {
  return h >= params.head_offset && h < params.head_end;
}

// One element e of the flat array, turned with its partner (or copied), for headDim % 4 == 2.
fn element(e: u32) -> f32 {
  let c = e % params.head_dim;
  let row = e / params.head_dim;
  let v = x[e >> 2u][e & 3u];
  if (!rotated(row % params.heads)) {
    return v;
  }
  let partner = x[(e ^ 1u) >> 2u][(e ^ 1u) & 3u];
  let cs = pair_turn(positions[row / params.heads] + params.offset, c / 2u);
  if ((c & 1u) == 0u) {
    return v * cs.x - partner * cs.y;
  }
  return partner * cs.y + v * cs.x;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let g = (wid.x + wid.y * groups.x) * WG + lid.x;
  if (params.head_dim % 4u != 0u) {
    let e = 4u * g;
    if (e >= params.total) {
      return;
    }
    if (e + 2u < params.total) {
      out[g] = vec4f(element(e), element(e + 1u), element(e + 2u), element(e + 3u));
    } else {
      out[g].x = element(e);
      out[g].y = element(e + 1u);
    }
    return;
  }
  let qd = params.head_dim / 4u;
  let q = g % qd;
  let rest = g / qd;
  let t = rest / params.chunks;
  if (t >= params.tokens) {
    return;
  }
  let h0 = (rest % params.chunks) * HPI;
  let p = positions[t] + params.offset;
  let c0 = pair_turn(p, 2u * q);
  let c1 = pair_turn(p, 2u * q + 1u);
  let base = (t * params.heads + h0) * qd + q;
  if (h0 + HPI <= params.heads) {
    let v0 = x[base];
    let v1 = x[base + qd];
    let v2 = x[base + 2u * qd];
    let v3 = x[base + 3u * qd];
    let v4 = x[base + 4u * qd];
    let v5 = x[base + 5u * qd];
    let v6 = x[base + 6u * qd];
    let v7 = x[base + 7u * qd];
    out[base] = select(v0, rotate_pairs(v0, c0, c1), rotated(h0));
    out[base + qd] = select(v1, rotate_pairs(v1, c0, c1), rotated(h0 + 1u));
    out[base + 2u * qd] = select(v2, rotate_pairs(v2, c0, c1), rotated(h0 + 2u));
    out[base + 3u * qd] = select(v3, rotate_pairs(v3, c0, c1), rotated(h0 + 3u));
    out[base + 4u * qd] = select(v4, rotate_pairs(v4, c0, c1), rotated(h0 + 4u));
    out[base + 5u * qd] = select(v5, rotate_pairs(v5, c0, c1), rotated(h0 + 5u));
    out[base + 6u * qd] = select(v6, rotate_pairs(v6, c0, c1), rotated(h0 + 6u));
    out[base + 7u * qd] = select(v7, rotate_pairs(v7, c0, c1), rotated(h0 + 7u));
  } else {
    for (var h = h0; h < params.heads; h++) {
      let i = base + (h - h0) * qd;
      let v = x[i];
      out[i] = select(v, rotate_pairs(v, c0, c1), rotated(h));
    }
  }
}
