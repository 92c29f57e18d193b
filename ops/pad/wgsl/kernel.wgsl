// pad/kernel: out[o, p, i] = x[o, source(p), i], or `value` where source(p) is none (constant mode);
// x is [outer, size, inner], out is [outer, padded, inner] with padded = before + size + after.
//
// One vec4 of out per invocation per step of a grid-stride loop (the grid is capped at 65,535
// workgroups; mod.ts sizes it). Every element of x is read once per output element that copies it
// and every element of out written once: one read and one write per output element, nothing else.
// - inner % 4 == 0: the four elements of a vec4 of out share (o, p) and so copy one vec4 of x (or
//   are all `value`): one vec4 load, one vec4 store, one division chain per vec4.
// - inner == 1 (padding the last axis), a vec4 of out wholly inside its row's copied span: its
//   four elements are consecutive in x from s = o * size + p - before, which starts anywhere in a
//   vec4, so the two vec4s of x holding them are loaded and shifted by s % 4 (one division, by
//   padded, per vec4 of out).
// - inner == 1, a vec4 over a pad or across two rows of out, rows of at least 4: each element is in
//   row o or, past the row's end, row o + 1: one comparison each, then its source read as a scalar.
//   Such vec4s are a few in every row, but with short rows they decide the rate: at 256 x 512 rows
//   of 512 (+1/+1) the carried positions of the path below ran at 79.7% of the read probe.
// - otherwise (inner % 4 not 0 or 1, or rows shorter than 4): the position of the first element is
//   divided out once and carried to the next three, each read as a scalar (neighbouring invocations
//   read neighbouring elements, so the loads coalesce); a partial last vec4 is written one component
//   at a time, so nothing past the end of out is written.
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
  for (var q = wid.x * WG + lid; q < quads; q += groups.x * WG) {
    let e = 4u * q;
    if (params.inner == 1u) {
      let o = e / params.padded;
      let p = e - o * params.padded;
      if (p >= params.before && p + 4u <= params.before + params.size) {
        let s = o * params.size + p - params.before;
        let b = s >> 2u;
        // hi is read only when s % 4 != 0, and then b + 1 holds elements of the span.
        out[q] = shifted(x[b], x[min(b + 1u, last_quad)], s & 3u);
        continue;
      }
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
        continue;
      }
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
}
