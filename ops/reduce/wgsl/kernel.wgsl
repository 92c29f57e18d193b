// reduce/kernel: out[o, i] = sum | max | min | mean of x[o, 0..length, i], x viewed as [outer, length, inner].
//
// x is read in quads (vec4s: quad q holds elements 4q .. 4q + 3), PER independent loads per
// invocation before any is used. Two layouts, chosen by the (uniform) shape:
// - inner = 1, reducing the last axis: `lanes` invocations (a power of two) share a row, 256 / lanes
//   rows per workgroup, and lane k takes the row's quads k, k + lanes, ...; components outside the
//   row are masked (a row starts off a quad boundary when length % 4 != 0; reading a neighbour's
//   components is harmless). The row's lanes combine through workgroup memory in two steps (groups
//   of up to 16 partials, then every lane combines its row's groups).
// - inner > 1: each invocation owns a quad of 4 neighbouring outputs (columns i0 .. i0 + 3 of one
//   o), 256 / lanes of them per workgroup side by side, so neighbouring invocations read
//   neighbouring addresses; `lanes` invocations per quad stride along the axis and combine through
//   workgroup memory. When inner % 4 != 0 a quad of x is not aligned and is read per component.
// Workgroups beyond 65,535 fold into y: workgroup = id.x + id.y * num_workgroups.x.
struct Params {
  outer: u32,   // product of the axes before the reduced one
  length: u32,  // length of the reduced axis
  inner: u32,   // product of the axes after it
  lanes: u32,   // invocations per row (inner = 1) or per quad of outputs (inner > 1), a power of two
  op: u32,      // 0 = sum, 1 = max, 2 = min, 3 = mean
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP = 256u;
const PER = 8u;    // quads per invocation per step (mod.ts sizes `lanes` with the same number)
const GROUP = 16u; // partials one invocation combines in the first step of a row reduction
const MAX = 1u;
const MIN = 2u;
const MEAN = 3u;

var<workgroup> partials: array<f32, WORKGROUP>;
var<workgroup> groups: array<f32, WORKGROUP>;
var<workgroup> quad_partials: array<vec4f, WORKGROUP>;

// NaN is recognised from its bits: a float comparison may be folded away by a compiler that
// assumes NaN never occurs, which WGSL allows.
fn is_nan(v: vec4f) -> vec4<bool> {
  return (bitcast<vec4u>(v) & vec4u(0x7fffffffu)) > vec4u(0x7f800000u);
}

// max and min propagate NaN, as torch.amax / amin do; WGSL's max() and min() would drop it.
fn combine(a: vec4f, b: vec4f) -> vec4f {
  if (params.op == MAX || params.op == MIN) {
    let m = select(min(a, b), max(a, b), params.op == MAX);
    return select(select(m, b, is_nan(b)), a, is_nan(a));
  }
  return a + b;
}

fn combine1(a: f32, b: f32) -> f32 {
  return combine(vec4f(a), vec4f(b)).x;
}

fn finish(acc: f32) -> f32 {
  if (params.op != MEAN) {
    return acc;
  }
  // The mean of an empty axis is 0 / 0, written as NaN's bits rather than computed.
  return select(acc / f32(params.length), bitcast<f32>(0x7fc00000u), params.length == 0u);
}

// Combines `value` over the `lanes` invocations of this invocation's row; each gets the result.
fn row_reduce(value: f32, lid: u32, lanes: u32) -> f32 {
  if (lanes == 1u) {
    return value;
  }
  partials[lid] = value;
  workgroupBarrier();
  let width = min(lanes, GROUP);
  let per_row = lanes / width;
  if (lid < WORKGROUP / width) {
    // Group lid % per_row of row lid / per_row: lanes j, j + per_row, ... (conflict-free reads).
    let start = (lid / per_row) * lanes + lid % per_row;
    var acc = partials[start];
    for (var i = 1u; i < width; i++) {
      acc = combine1(acc, partials[start + i * per_row]);
    }
    groups[lid] = acc;
  }
  workgroupBarrier();
  let first = (lid / lanes) * per_row;
  var acc = groups[first];
  for (var i = 1u; i < per_row; i++) {
    acc = combine1(acc, groups[first + i]);
  }
  return acc;
}

// Which components of quad q belong to the row [begin, end).
fn inside(q: u32, begin: u32, end: u32) -> vec4<bool> {
  let e = vec4u(4u * q) + vec4u(0u, 1u, 2u, 3u);
  return (e >= vec4u(begin)) & (e < vec4u(end));
}

// The row's quad j (of quads, from quad `first`), with `identity` in the components outside the
// row [begin, end) and all four past its last quad.
fn row_quad(j: u32, quads: u32, first: u32, begin: u32, end: u32, identity: vec4f) -> vec4f {
  var v = identity;
  if (j < quads) {
    v = select(identity, x[first + j], inside(first + j, begin, end));
  }
  return v;
}

// The PER quads of one step are written out by hand as v0 .. v7, never as an array indexed in a
// loop: naga bounds-checks every index of a function-scope array and the driver may keep such an
// array in local memory (spilled through L1/L2), the suspected reason the array-based kernels
// reached only 7-9% of the H200's bandwidth (see mod.ts). Named values can stay in registers.

// Reduces the last axis: rows of `length` contiguous elements.
fn reduce_rows(group: u32, lid: u32) {
  let lanes = params.lanes;
  let lane = lid % lanes;
  let row = group * (WORKGROUP / lanes) + lid / lanes;
  let live = row < params.outer;
  let begin = row * params.length;
  let end = begin + params.length;
  let first = begin / 4u;
  let quads = select(0u, (end + 3u) / 4u - first, live && params.length > 0u);
  // Masked components and the accumulator start from the identity of the sum (0) or, for max and
  // min, from the row's first element, which is an identity for them and needs no infinity.
  var identity = vec4f(0.0);
  if (quads > 0u && (params.op == MAX || params.op == MIN)) {
    identity = vec4f(x[first][begin % 4u]);
  }
  var acc = identity;
  for (var base = lane; base < quads; base += PER * lanes) {
    let v0 = row_quad(base, quads, first, begin, end, identity);
    let v1 = row_quad(base + lanes, quads, first, begin, end, identity);
    let v2 = row_quad(base + 2u * lanes, quads, first, begin, end, identity);
    let v3 = row_quad(base + 3u * lanes, quads, first, begin, end, identity);
    let v4 = row_quad(base + 4u * lanes, quads, first, begin, end, identity);
    let v5 = row_quad(base + 5u * lanes, quads, first, begin, end, identity);
    let v6 = row_quad(base + 6u * lanes, quads, first, begin, end, identity);
    let v7 = row_quad(base + 7u * lanes, quads, first, begin, end, identity);
    acc = combine(combine(combine(combine(combine(combine(combine(combine(acc, v0), v1), v2), v3), v4), v5), v6), v7);
  }
  let result = row_reduce(combine1(combine1(acc.x, acc.y), combine1(acc.z, acc.w)), lid, lanes);
  if (live && lane == 0u) {
    out[row] = finish(result);
  }
}

// Element e of x.
fn element(e: u32) -> f32 {
  return x[e / 4u][e % 4u];
}

// Quad of x at element e (the first of 4 neighbouring columns, `valid` of them real; 0 in the rest).
fn load_quad(e: u32, valid: u32) -> vec4f {
  if (params.inner % 4u == 0u) {
    return x[e / 4u];
  }
  var v = vec4f(0.0);
  if (valid > 0u) {
    v.x = element(e);
  }
  if (valid > 1u) {
    v.y = element(e + 1u);
  }
  if (valid > 2u) {
    v.z = element(e + 2u);
  }
  if (valid > 3u) {
    v.w = element(e + 3u);
  }
  return v;
}

// The quad at step l of the axis from element `start`, or `identity` past the axis's end (or for an
// invocation that owns no outputs).
fn column_quad(l: u32, start: u32, valid: u32, identity: vec4f) -> vec4f {
  var v = identity;
  if (valid > 0u && l < params.length) {
    v = load_quad(start + l * params.inner, valid);
  }
  return v;
}

// Reduces an earlier axis: each invocation owns a quad of neighbouring outputs.
fn reduce_columns(group: u32, lid: u32) {
  let lanes = params.lanes;
  let slots = WORKGROUP / lanes;
  let lane = lid / slots;
  let slot = lid % slots;
  let quads_per_outer = (params.inner + 3u) / 4u;
  let p = group * slots + slot;
  let live = p < params.outer * quads_per_outer;
  let o = p / quads_per_outer;
  let i0 = 4u * (p % quads_per_outer);
  let valid = select(0u, min(params.inner - i0, 4u), live); // > 0 exactly when live
  let start = o * params.length * params.inner + i0; // element (o, 0, i0)
  // For max and min the first row's quad is the identity (see reduce_rows).
  var identity = vec4f(0.0);
  if (live && params.length > 0u && (params.op == MAX || params.op == MIN)) {
    identity = load_quad(start, valid);
  }
  var acc = identity;
  for (var base = lane; base < params.length; base += PER * lanes) {
    let v0 = column_quad(base, start, valid, identity);
    let v1 = column_quad(base + lanes, start, valid, identity);
    let v2 = column_quad(base + 2u * lanes, start, valid, identity);
    let v3 = column_quad(base + 3u * lanes, start, valid, identity);
    let v4 = column_quad(base + 4u * lanes, start, valid, identity);
    let v5 = column_quad(base + 5u * lanes, start, valid, identity);
    let v6 = column_quad(base + 6u * lanes, start, valid, identity);
    let v7 = column_quad(base + 7u * lanes, start, valid, identity);
    acc = combine(combine(combine(combine(combine(combine(combine(combine(acc, v0), v1), v2), v3), v4), v5), v6), v7);
  }
  quad_partials[lid] = acc;
  workgroupBarrier();
  for (var s = lanes / 2u; s > 0u; s /= 2u) {
    if (lane < s) {
      quad_partials[lid] = combine(quad_partials[lid], quad_partials[lid + s * slots]);
    }
    workgroupBarrier();
  }
  if (lane == 0u) {
    let result = quad_partials[lid];
    let o0 = o * params.inner + i0;
    if (valid > 0u) {
      out[o0] = finish(result.x);
    }
    if (valid > 1u) {
      out[o0 + 1u] = finish(result.y);
    }
    if (valid > 2u) {
      out[o0 + 2u] = finish(result.z);
    }
    if (valid > 3u) {
      out[o0 + 3u] = finish(result.w);
    }
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
) {
  let group = wid.x + wid.y * grid.x;
  if (params.inner == 1u) {
    reduce_rows(group, lid);
  } else {
    reduce_columns(group, lid);
  }
}
