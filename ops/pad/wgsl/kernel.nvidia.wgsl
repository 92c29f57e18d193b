// pad/kernel.nvidia: kernel.wgsl (whose header says what the op does and how each layout is read)
// with one change on the inner == 1 path: a vec4 of out inside its row's copied span needs the two
// vec4s of x that hold its elements, and the second is the first of the next invocation's when both
// lie in the same stretch of x, so each invocation loads only its first, the workgroup passes them
// along through workgroup memory, and an invocation whose neighbour holds another vec4 (the last of
// the workgroup, a row boundary) loads its second itself. Two invocations loading the same vec4 of x
// at once each fetch it; here each is fetched once. The grid-stride loop steps whole workgroups,
// so that its barriers are in uniform control flow.
struct Params {
  outer: u32,
  size: u32,
  inner: u32,
  before: u32,
  padded: u32,
  mode: u32,   // 0 constant, 1 reflect, 2 replicate (PAD_MODES in reference.ts)
  value: f32,
  n: u32,      // elements of out
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

// #include "vec4_parts.wgsl"

const WG = 256u;

// Each invocation's first vec4 of x on the inner == 1 path, and its index (NONE when it has none).
var<workgroup> firsts: array<vec4f, WG>;
var<workgroup> first_at: array<u32, WG>;
const NONE = 0xffffffffu;

// The input position that output position p copies, or -1 for constant padding. Reflect and
// replicate pads are smaller than size (checked on the host), so one reflection suffices.
fn source(p: u32) -> i32 {
  var s = i32(p) - i32(params.before);
  let last = i32(params.size) - 1;
  if (s >= 0 && s <= last) {
    return s;
  }
  if (params.mode == 0u) {
    return -1;
  }
  if (params.mode == 2u) {
    return clamp(s, 0, last);
  }
  return select(2 * last - s, -s, s < 0);
}

// Element (o, p, i) of out, given as pos = (o, p, i).
fn element(pos: vec3u) -> f32 {
  let s = source(pos.y);
  if (s < 0) {
    return params.value;
  }
  return x_at((pos.x * params.size + u32(s)) * params.inner + pos.z);
}

// The position (o, p, i) of the element after `pos`, carrying i into p and p into o.
fn advance(pos: vec3u) -> vec3u {
  if (pos.z + 1u < params.inner) {
    return vec3u(pos.x, pos.y, pos.z + 1u);
  }
  if (pos.y + 1u < params.padded) {
    return vec3u(pos.x, pos.y + 1u, 0u);
  }
  return vec3u(pos.x + 1u, 0u, 0u);
}

// With inner == 1 and rows of at least 4: element p of row o of out, where p may run past the row
// into row o + 1 (p < 2 * padded).
fn row_element(o: u32, p: u32) -> f32 {
  let next = p >= params.padded;
  let s = source(select(p, p - params.padded, next));
  if (s < 0) {
    return params.value;
  }
  return x_at(select(o, o + 1u, next) * params.size + u32(s));
}

// Elements r .. r + 3 of the eight in (lo, hi).
fn shifted(lo: vec4f, hi: vec4f, r: u32) -> vec4f {
  if (r == 0u) {
    return lo;
  }
  if (r == 1u) {
    return vec4f(lo.yzw, hi.x);
  }
  if (r == 2u) {
    return vec4f(lo.zw, hi.xy);
  }
  return vec4f(lo.w, hi.xyz);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32,
        @builtin(num_workgroups) groups: vec3u) {
  let quads = (params.n + 3u) / 4u;
  let last_quad = arrayLength(&x) - 1u;
  for (var q0 = wid.x * WG; q0 < quads; q0 += groups.x * WG) {
    let q = q0 + lid;
    let e = 4u * q;
    if (params.inner == 1u) {
      var b = NONE;
      var shift = 0u;
      if (q < quads) {
        let o = e / params.padded;
        let p = e - o * params.padded;
        if (p >= params.before && p + 4u <= params.before + params.size) {
          let s = o * params.size + p - params.before;
          b = s >> 2u;
          shift = s & 3u;
        }
      }
      var lo = vec4f(0.0);
      if (b != NONE) {
        lo = x[b];
      }
      firsts[lid] = lo;
      first_at[lid] = b;
      workgroupBarrier();
      if (b != NONE) {
        // hi is used only when shift != 0, and then b + 1 holds elements of the span.
        var hi = vec4f(0.0);
        if (shift != 0u) {
          if (lid + 1u < WG && first_at[lid + 1u] == b + 1u) {
            hi = firsts[lid + 1u];
          } else {
            hi = x[min(b + 1u, last_quad)];
          }
        }
        out[q] = shifted(lo, hi, shift);
      } else if (q < quads) {
        let o = e / params.padded;
        let p = e - o * params.padded;
        if (params.padded >= 4u) {
          // A vec4 over a pad or across two rows: each element is in row o or o + 1.
          let count = min(4u, params.n - e);
          var v = vec4f(row_element(o, p), 0.0, 0.0, 0.0);
          if (count > 1u) {
            v.y = row_element(o, p + 1u);
          }
          if (count > 2u) {
            v.z = row_element(o, p + 2u);
          }
          if (count == 4u) {
            v.w = row_element(o, p + 3u);
            out[q] = v;
          } else {
            store_part(e, count, v);
          }
        } else {
          general(e, q, o, p, 0u);
        }
      }
      workgroupBarrier();
      continue;
    }
    if (q >= quads) {
      continue;
    }
    let i = e % params.inner;
    let t = e / params.inner;
    let p = t % params.padded;
    let o = t / params.padded;
    if (params.inner % 4u == 0u) {
      let s = source(p);
      if (s < 0) {
        out[q] = vec4f(params.value);
      } else {
        out[q] = x[((o * params.size + u32(s)) * params.inner + i) / 4u];
      }
      continue;
    }
    general(e, q, o, p, i);
  }
}

// Elements e .. e + 3 of out (vec4 q, its first at (o, p, i)), each read as a scalar; a partial last
// vec4 is written one component at a time.
fn general(e: u32, q: u32, o: u32, p: u32, i: u32) {
  // Only the `count` elements that exist are read: a position past out's end is never used.
  let count = min(4u, params.n - e);
  let pos0 = vec3u(o, p, i);
  let pos1 = advance(pos0);
  let pos2 = advance(pos1);
  let pos3 = advance(pos2);
  var v = vec4f(element(pos0), 0.0, 0.0, 0.0);
  if (count > 1u) {
    v.y = element(pos1);
  }
  if (count > 2u) {
    v.z = element(pos2);
  }
  if (count == 4u) {
    v.w = element(pos3);
    out[q] = v;
  } else {
    store_part(e, count, v);
  }
}
