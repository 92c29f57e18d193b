// upsample/kernel: out[plane, oy, ox] = x[plane, sy(oy), sx(ox)], nearest neighbour, x is
// [planes, h, w] and out [planes, out_h, out_w] (planes = N * C). The source index is torch's:
// min(floor(f32(dst) * scale), in - 1), the product an f32 multiplication (correctly rounded in
// WGSL) and scale = f32(in / out) computed on the host (WGSL's f32 division is not correctly
// rounded, and the f32 rounding of the scale decides which row is copied).
//
// Two layouts, chosen by out_w (mod.ts sizes the grid for the one taken); one read and one write
// per output element in both:
// - out_w % 4 == 0: one invocation per tile of two output rows by one vec4 column (neighbouring
//   invocations on neighbouring vec4s of the rows, the grid folded into y). The column's four source
//   indices are found once for both rows, one division finds the first row's plane and oy and the
//   second is carried from it, and when both rows copy the same source row (every pair of a 2x
//   upsample) the second row is written from the first's vec4 without loading it again.
// - otherwise: the harness's streaming walk (quad_blocks.wgsl: blocks of 256 x 4 vec4s of out dealt
//   to workgroups in a grid-stride loop, every read of an invocation's four vec4s before the first
//   write); the position of a vec4's first element is divided out and carried to the next three,
//   and the elements past the last whole vec4 are written one at a time.
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
const PER = 4u; // vec4s per invocation per block, out_w % 4 != 0 (mod.ts sizes the grid with the same numbers)

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

// Vec4 q of out (elements 4q .. 4q + 3; only those before n are read), out_w % 4 != 0.
fn quad(q: u32) -> vec4f {
  let e = 4u * q;
  let ox = e % params.out_w;
  let t = e / params.out_w;
  let oy = t % params.out_h;
  let plane = t / params.out_h;
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

// The row of x (plane * h + sy) that output row oy of `plane` copies.
fn source_row(plane: u32, oy: u32) -> u32 {
  return plane * params.h + source_index(oy, params.scale_h, params.h);
}

// The four elements of x's row `row` at columns sx.
fn gather(row: u32, sx: vec4u) -> vec4f {
  let base = row * params.w;
  return vec4f(x_at(base + sx.x), x_at(base + sx.y), x_at(base + sx.z), x_at(base + sx.w));
}

// Tile g of two output rows by one vec4 column (out_w % 4 == 0).
fn row_pair(g: u32) {
  let quads = params.out_w / 4u;
  let rows = params.n / params.out_w;  // planes * out_h
  let tile = g / quads;
  let r = 2u * tile;
  if (r >= rows) {
    return;
  }
  let column = g - tile * quads;
  let ox = 4u * column;
  let sx = vec4u(source_index(ox, params.scale_w, params.w), source_index(ox + 1u, params.scale_w, params.w),
                 source_index(ox + 2u, params.scale_w, params.w), source_index(ox + 3u, params.scale_w, params.w));
  let plane = r / params.out_h;
  let oy = r - plane * params.out_h;
  let s0 = source_row(plane, oy);
  let v0 = gather(s0, sx);
  let second = r + 1u < rows;
  var v1 = v0;
  if (second) {
    let last = oy + 1u == params.out_h;
    let s1 = source_row(select(plane, plane + 1u, last), select(oy + 1u, 0u, last));
    if (s1 != s0) {
      v1 = gather(s1, sx);
    }
  }
  out[r * quads + column] = v0;
  if (second) {
    out[(r + 1u) * quads + column] = v1;
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32,
        @builtin(num_workgroups) groups: vec3u) {
  if (params.out_w % 4u == 0u) {
    row_pair((wid.x + wid.y * groups.x) * WG + lid);
    return;
  }
  let first = wid.x + wid.y * groups.x;
  let quads = params.n / 4u;
// #include "quad_blocks.wgsl"
  // The n % 4 elements past the last whole vec4, one at a time.
  let rest = params.n % 4u;
  if (rest != 0u && first == 0u && lid == 0u) {
    store_part(4u * quads, rest, quad(quads));
  }
}
