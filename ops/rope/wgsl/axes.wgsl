// rope/axes: multi-axis rotary position embedding of x [tokens, heads, headDim]; pair i of a head
// has its axis (pair_axis) and inverse frequency (inv_freq) from mod.ts, and turns by
// f32(positions[t, axis]) * inv_freq[i].
//
// mode 0 (adjacent pairs, headDim % 4 == 0) and mode 1 (channel c with c + headDim/2,
// headDim % 8 == 0): one invocation per (token, group of HPI heads, vec4 column q), as rope/kernel.
// Mode 0's vec4 holds pairs 2q and 2q + 1; mode 1's vec4 at column q of the first half holds the
// first channels of pairs 4q .. 4q + 3 and the vec4 at q + headDim/8 their partners, so the
// invocation reads and writes both. The angles are found once and reused for every head.
// mode 2 (any other headDim): one invocation per vec4 of the flat array, each element finding
// its own pair and partner; a partial last vec4 is written component by component.
struct Params {
  tokens: u32,
  heads: u32,
  head_dim: u32,
  axes: u32,
  mode: u32,
  half_pairs: u32,  // 1 when channel c pairs with c + headDim/2
  chunks: u32,  // ceil(heads / HPI), modes 0 and 1
  total: u32,   // tokens * heads * headDim
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> positions: array<i32>;
@group(0) @binding(2) var<storage, read> pair_axis: array<u32>;
@group(0) @binding(3) var<storage, read> inv_freq: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(5) var<uniform> params: Params;

const WG = 256u;
const HPI = 8u;  // heads per invocation (mod.ts sizes the grid with the same number)

// #include "turn.wgsl"

// (cos, sin) of pair i of token t.
fn pair_turn(t: u32, i: u32) -> vec2f {
  return turn(f32(positions[t * params.axes + pair_axis[i]]) * inv_freq[i]);
}

// One element e of the flat array turned with its partner (mode 2).
fn element(e: u32) -> f32 {
  let c = e % params.head_dim;
  let t = e / params.head_dim / params.heads;
  let half = params.head_dim / 2u;
  var i = c / 2u;
  var partner = e ^ 1u;
  var first = (c & 1u) == 0u;
  if (params.half_pairs == 1u) {
    first = c < half;
    i = select(c - half, c, first);
    partner = select(e - half, e + half, first);
  }
  let v = x[e >> 2u][e & 3u];
  let w = x[partner >> 2u][partner & 3u];
  let cs = pair_turn(t, i);
  if (first) {
    return v * cs.x - w * cs.y;
  }
  return w * cs.y + v * cs.x;
}

// Mode 1: the first-half vec4 a and its partners b turned by cosines c and sines s.
fn turn_first(a: vec4f, b: vec4f, c: vec4f, s: vec4f) -> vec4f {
  return a * c - b * s;
}
fn turn_second(a: vec4f, b: vec4f, c: vec4f, s: vec4f) -> vec4f {
  return a * s + b * c;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let g = (wid.x + wid.y * groups.x) * WG + lid.x;
  if (params.mode == 2u) {
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
  let cols = select(qd, qd / 2u, params.mode == 1u);  // vec4 columns one invocation starts from
  let q = g % cols;
  let rest = g / cols;
  let t = rest / params.chunks;
  if (t >= params.tokens) {
    return;
  }
  let h0 = (rest % params.chunks) * HPI;
  let h1 = min(h0 + HPI, params.heads);
  let base = (t * params.heads + h0) * qd + q;
  if (params.mode == 0u) {
    let c0 = pair_turn(t, 2u * q);
    let c1 = pair_turn(t, 2u * q + 1u);
    if (h1 - h0 == HPI) {
      let v0 = x[base];
      let v1 = x[base + qd];
      let v2 = x[base + 2u * qd];
      let v3 = x[base + 3u * qd];
      let v4 = x[base + 4u * qd];
      let v5 = x[base + 5u * qd];
      let v6 = x[base + 6u * qd];
      let v7 = x[base + 7u * qd];
      out[base] = rotate_pairs(v0, c0, c1);
      out[base + qd] = rotate_pairs(v1, c0, c1);
      out[base + 2u * qd] = rotate_pairs(v2, c0, c1);
      out[base + 3u * qd] = rotate_pairs(v3, c0, c1);
      out[base + 4u * qd] = rotate_pairs(v4, c0, c1);
      out[base + 5u * qd] = rotate_pairs(v5, c0, c1);
      out[base + 6u * qd] = rotate_pairs(v6, c0, c1);
      out[base + 7u * qd] = rotate_pairs(v7, c0, c1);
    } else {
      for (var h = h0; h < h1; h++) {
        let i = base + (h - h0) * qd;
        out[i] = rotate_pairs(x[i], c0, c1);
      }
    }
    return;
  }
  let p0 = pair_turn(t, 4u * q);
  let p1 = pair_turn(t, 4u * q + 1u);
  let p2 = pair_turn(t, 4u * q + 2u);
  let p3 = pair_turn(t, 4u * q + 3u);
  let c = vec4f(p0.x, p1.x, p2.x, p3.x);
  let s = vec4f(p0.y, p1.y, p2.y, p3.y);
  let hq = qd / 2u;  // the partner's offset in vec4s
  if (h1 - h0 == HPI) {
    let a0 = x[base];
    let b0 = x[base + hq];
    let a1 = x[base + qd];
    let b1 = x[base + qd + hq];
    let a2 = x[base + 2u * qd];
    let b2 = x[base + 2u * qd + hq];
    let a3 = x[base + 3u * qd];
    let b3 = x[base + 3u * qd + hq];
    out[base] = turn_first(a0, b0, c, s);
    out[base + hq] = turn_second(a0, b0, c, s);
    out[base + qd] = turn_first(a1, b1, c, s);
    out[base + qd + hq] = turn_second(a1, b1, c, s);
    out[base + 2u * qd] = turn_first(a2, b2, c, s);
    out[base + 2u * qd + hq] = turn_second(a2, b2, c, s);
    out[base + 3u * qd] = turn_first(a3, b3, c, s);
    out[base + 3u * qd + hq] = turn_second(a3, b3, c, s);
    let a4 = x[base + 4u * qd];
    let b4 = x[base + 4u * qd + hq];
    let a5 = x[base + 5u * qd];
    let b5 = x[base + 5u * qd + hq];
    let a6 = x[base + 6u * qd];
    let b6 = x[base + 6u * qd + hq];
    let a7 = x[base + 7u * qd];
    let b7 = x[base + 7u * qd + hq];
    out[base + 4u * qd] = turn_first(a4, b4, c, s);
    out[base + 4u * qd + hq] = turn_second(a4, b4, c, s);
    out[base + 5u * qd] = turn_first(a5, b5, c, s);
    out[base + 5u * qd + hq] = turn_second(a5, b5, c, s);
    out[base + 6u * qd] = turn_first(a6, b6, c, s);
    out[base + 6u * qd + hq] = turn_second(a6, b6, c, s);
    out[base + 7u * qd] = turn_first(a7, b7, c, s);
    out[base + 7u * qd + hq] = turn_second(a7, b7, c, s);
  } else {
    for (var h = h0; h < h1; h++) {
      let i = base + (h - h0) * qd;
      let a = x[i];
      let b = x[i + hq];
      out[i] = turn_first(a, b, c, s);
      out[i + hq] = turn_second(a, b, c, s);
    }
  }
}
