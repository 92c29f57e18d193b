// upsample/kernel: out[plane, oy, ox] = x[plane, sy(oy), sx(ox)], nearest neighbour, x is
// [planes, h, w] and out [planes, out_h, out_w] (planes = N * C). The source index is torch's:
// min(floor(f32(dst) * scale), in - 1), the product an f32 multiplication (correctly rounded in
// WGSL) and scale = f32(in / out) computed on the host (WGSL's f32 division is not correctly
// rounded, and the f32 rounding of the scale decides which row is copied).
//
// Blocks of 256 x 4 vec4s of out are dealt to workgroups in a grid-stride loop; each invocation
// computes four vec4s, neighbouring invocations on neighbouring vec4s, with every read issued before
// the first write (more bytes in flight; see mod.ts). One read and one write per output element.
// When out_w % 4 == 0 the four elements of a vec4 share a row, so the row's source is found
// once; otherwise the position of the first element is divided out and carried to the next three,
// and a partial last vec4 is written one component at a time.
struct Params {
  h: u32,
  w: u32,
  out_h: u32,
  out_w: u32,
  scale_h: f32,
  scale_w: f32,
  n: u32,      // elements of out
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

// #include "vec4_parts.wgsl"

const WG = 256u;
const PER = 4u; // vec4s per invocation per block (mod.ts sizes the grid with the same numbers)

fn source_index(dst: u32, scale: f32, size: u32) -> u32 {
  return min(u32(floor(f32(dst) * scale)), size - 1u);
}

// The element of x that output position pos = (plane, oy, ox) copies.
fn element(pos: vec3u) -> f32 {
  let sy = source_index(pos.y, params.scale_h, params.h);
  let sx = source_index(pos.z, params.scale_w, params.w);
  return x_at((pos.x * params.h + sy) * params.w + sx);
}

// The output position after pos, carrying ox into oy and oy into the plane.
fn advance(pos: vec3u) -> vec3u {
  if (pos.z + 1u < params.out_w) {
    return vec3u(pos.x, pos.y, pos.z + 1u);
  }
  if (pos.y + 1u < params.out_h) {
    return vec3u(pos.x, pos.y + 1u, 0u);
  }
  return vec3u(pos.x + 1u, 0u, 0u);
}

// Vec4 q of out (elements 4q .. 4q + 3; only those before n are read).
fn quad(q: u32) -> vec4f {
  let e = 4u * q;
  let ox = e % params.out_w;
  let t = e / params.out_w;
  let oy = t % params.out_h;
  let plane = t / params.out_h;
  if (params.out_w % 4u == 0u) {
    let base = (plane * params.h + source_index(oy, params.scale_h, params.h)) * params.w;
    return vec4f(
      x_at(base + source_index(ox, params.scale_w, params.w)),
      x_at(base + source_index(ox + 1u, params.scale_w, params.w)),
      x_at(base + source_index(ox + 2u, params.scale_w, params.w)),
      x_at(base + source_index(ox + 3u, params.scale_w, params.w)),
    );
  }
  let count = min(4u, params.n - e);
  let pos0 = vec3u(plane, oy, ox);
  let pos1 = advance(pos0);
  let pos2 = advance(pos1);
  var v = vec4f(element(pos0), 0.0, 0.0, 0.0);
  if (count > 1u) {
    v.y = element(pos1);
  }
  if (count > 2u) {
    v.z = element(pos2);
  }
  if (count > 3u) {
    v.w = element(advance(pos2));
  }
  return v;
}

// #include "gathered_stream.wgsl"
