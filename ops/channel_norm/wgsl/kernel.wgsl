// channel_norm/kernel: x is [N, C, L]; at every sample n and position l,
// out[n, c, l] = x[n, c, l] * root / max(norm, eps) * weight[c] + bias[c], norm the L2 norm of
// x[n, :, l] over the C channels and root = sqrt(C) (then silu, when params.activation is 1).
//
// Positions are taken in quads (4 consecutive positions of one channel: one vec4 when L % 4 == 0).
// A workgroup covers `span` = 256 / lanes consecutive quads of one sample, every channel of them:
// invocation lid takes quad lid % span and channels lane, lane + lanes, ... (lane = lid / span),
// so neighbouring invocations read neighbouring vec4s of one channel row. Each quad's four sums of
// squares are reduced over its `lanes` invocations through workgroup memory (a tree, log2(lanes)
// barriers).
// - aligned and resident (L % 4 == 0, C <= PER * lanes): every invocation holds its PER channels'
//   vec4s in registers (v0 .. v7), so x is read once and written once. The loads are issued
//   unconditionally, a channel past C clamped to the last one and dropped by one compare, a quad
//   past the sample's end clamped to its last quad and not written.
// - otherwise (`general`: L % 4 != 0, or more than PER * 256 = 2,048 channels): a loop over the
//   invocation's channels sums the squares, and a second loop reads them again (from cache: the
//   workgroup's quads of every channel were just read) to write them; a quad of a ragged row is read
//   and written one component at a time, positions past L masked, so nothing outside [0, L) is
//   written.
// Workgroups beyond 65,535 fold into y: workgroup = id.x + id.y * num_workgroups.x, N * blocks of them.
struct Params {
  samples: u32,     // N
  c: u32,           // channels
  l: u32,           // positions per channel
  quads: u32,       // quads of positions per channel, ceil(l / 4)
  blocks: u32,      // workgroups per sample, ceil(quads / span)
  lanes: u32,       // invocations sharing a quad (a power of two <= 256); span = 256 / lanes
  resident: u32,    // 1 when c <= PER * lanes
  has_weight: u32,
  has_bias: u32,
  activation: u32,  // 0 none, 1 silu
  eps: f32,
  root: f32,        // sqrt(c)
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(4) var<uniform> params: Params;

const WG = 256u;
const PER = 8u; // channels an invocation holds in registers (mod.ts sizes `lanes` with the same number)

var<workgroup> partials: array<vec4f, WG>;

// #include "silu.wgsl"

// The sum over the quad's `lanes` invocations of each one's `value`, given to every invocation.
// Called once per workgroup, in uniform control flow.
fn reduce_lanes(value: vec4f, lid: u32, q: u32, span: u32) -> vec4f {
  partials[lid] = value;
  workgroupBarrier();
  let lane = lid / span;
  for (var stride = params.lanes / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      partials[lid] += partials[lid + stride * span];
    }
    workgroupBarrier();
  }
  return partials[q];
}

// What multiplies x at each of the quad's positions: root / max(norm, eps), a NaN norm kept as it
// is (torch's clamp_min keeps NaN, where WGSL's max may return eps; NaN is read from the bits, since
// a compiler may fold a float self-comparison away). Once per position, not per element.
fn factor(squares: vec4f) -> vec4f {
  let norm = sqrt(squares);
  let nan = (bitcast<vec4u>(norm) & vec4u(0x7fffffffu)) > vec4u(0x7f800000u);
  return params.root / select(max(norm, vec4f(params.eps)), norm, nan);
}

// The normalised quad v of channel c: times the weight, plus the bias, then the activation.
fn finish(v: vec4f, f: vec4f, c: u32) -> vec4f {
  var y = v * f;
  if (params.has_weight != 0u) {
    y *= weight[c];
  }
  if (params.has_bias != 0u) {
    y += bias[c];
  }
  if (params.activation == 1u) {
    y = silu(y);
  }
  return y;
}

// ---------------------------------------------------------------- aligned and resident

fn resident_aligned(n: u32, s: u32, lane: u32, lid: u32, q: u32, span: u32) {
  let live = s < params.quads;
  let p = min(s, params.quads - 1u);
  let top = params.c - 1u;
  let first = n * params.c;
  let t = params.lanes;
  let c0 = lane;
  let c1 = lane + t;
  let c2 = lane + 2u * t;
  let c3 = lane + 3u * t;
  let c4 = lane + 4u * t;
  let c5 = lane + 5u * t;
  let c6 = lane + 6u * t;
  let c7 = lane + 7u * t;
  let v0 = x[(first + min(c0, top)) * params.quads + p];
  let v1 = x[(first + min(c1, top)) * params.quads + p];
  let v2 = x[(first + min(c2, top)) * params.quads + p];
  let v3 = x[(first + min(c3, top)) * params.quads + p];
  let v4 = x[(first + min(c4, top)) * params.quads + p];
  let v5 = x[(first + min(c5, top)) * params.quads + p];
  let v6 = x[(first + min(c6, top)) * params.quads + p];
  let v7 = x[(first + min(c7, top)) * params.quads + p];
  let zero = vec4f(0.0);
  let squares = ((select(zero, v0 * v0, c0 <= top) + select(zero, v1 * v1, c1 <= top)) +
                 (select(zero, v2 * v2, c2 <= top) + select(zero, v3 * v3, c3 <= top))) +
                ((select(zero, v4 * v4, c4 <= top) + select(zero, v5 * v5, c5 <= top)) +
                 (select(zero, v6 * v6, c6 <= top) + select(zero, v7 * v7, c7 <= top)));
  let f = factor(reduce_lanes(squares, lid, q, span));
  if (live) {
    if (c0 <= top) {
      out[(first + c0) * params.quads + s] = finish(v0, f, c0);
    }
    if (c1 <= top) {
      out[(first + c1) * params.quads + s] = finish(v1, f, c1);
    }
    if (c2 <= top) {
      out[(first + c2) * params.quads + s] = finish(v2, f, c2);
    }
    if (c3 <= top) {
      out[(first + c3) * params.quads + s] = finish(v3, f, c3);
    }
    if (c4 <= top) {
      out[(first + c4) * params.quads + s] = finish(v4, f, c4);
    }
    if (c5 <= top) {
      out[(first + c5) * params.quads + s] = finish(v5, f, c5);
    }
    if (c6 <= top) {
      out[(first + c6) * params.quads + s] = finish(v6, f, c6);
    }
    if (c7 <= top) {
      out[(first + c7) * params.quads + s] = finish(v7, f, c7);
    }
  }
}

// ---------------------------------------------------------------- general

// Which of quad s's positions lie in [0, l).
fn inside(s: u32) -> vec4<bool> {
  return (vec4u(4u * s) + vec4u(0u, 1u, 2u, 3u)) < vec4u(params.l);
}

// Quad s of channel c of sample n, 0 at positions past l (all four past the last quad).
fn fetch(n: u32, c: u32, s: u32) -> vec4f {
  var v = vec4f(0.0);
  if (s >= params.quads) {
    return v;
  }
  let e = (n * params.c + c) * params.l + 4u * s;
  if (params.l % 4u == 0u) {
    return x[e / 4u];
  }
  let mask = inside(s);
  if (mask.x) {
    v.x = x[e / 4u][e % 4u];
  }
  if (mask.y) {
    v.y = x[(e + 1u) / 4u][(e + 1u) % 4u];
  }
  if (mask.z) {
    v.z = x[(e + 2u) / 4u][(e + 2u) % 4u];
  }
  if (mask.w) {
    v.w = x[(e + 3u) / 4u][(e + 3u) % 4u];
  }
  return v;
}

// Writes y as quad s of channel c of sample n, its positions in [0, l) only.
fn put(n: u32, c: u32, s: u32, y: vec4f) {
  if (s >= params.quads) {
    return;
  }
  let e = (n * params.c + c) * params.l + 4u * s;
  if (params.l % 4u == 0u) {
    out[e / 4u] = y;
    return;
  }
  let mask = inside(s);
  if (mask.x) {
    out[e / 4u][e % 4u] = y.x;
  }
  if (mask.y) {
    out[(e + 1u) / 4u][(e + 1u) % 4u] = y.y;
  }
  if (mask.z) {
    out[(e + 2u) / 4u][(e + 2u) % 4u] = y.z;
  }
  if (mask.w) {
    out[(e + 3u) / 4u][(e + 3u) % 4u] = y.w;
  }
}

fn general(n: u32, s: u32, lane: u32, lid: u32, q: u32, span: u32) {
  var squares = vec4f(0.0);
  for (var c = lane; c < params.c; c += params.lanes) {
    let v = fetch(n, c, s);
    squares += v * v;
  }
  let f = factor(reduce_lanes(squares, lid, q, span));
  for (var c = lane; c < params.c; c += params.lanes) {
    put(n, c, s, finish(fetch(n, c, s), f, c));
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let slot = wid.x + wid.y * grid.x;
  if (slot >= params.samples * params.blocks) {
    return;
  }
  let n = slot / params.blocks;
  let span = WG / params.lanes;
  let q = lid % span;
  let lane = lid / span;
  let s = (slot % params.blocks) * span + q;
  if (params.l % 4u == 0u && params.resident != 0u) {
    resident_aligned(n, s, lane, lid, q, span);
  } else {
    general(n, s, lane, lid, q, span);
  }
}
