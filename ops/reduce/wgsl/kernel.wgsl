// reduce/kernel: out[o, i] = sum | max | min | mean of x[o, 0..length, i], x viewed as [outer, length, inner].
//
// x is read in quads (vec4s: quad q holds elements 4q .. 4q + 3), PER independent loads per
// invocation per step before any is used. Two layouts, chosen by the (uniform) shape:
// - inner = 1, reducing the last axis: `lanes` invocations (a power of two) share a row, 256 / lanes
//   rows per workgroup, and lane k takes the row's quads k, k + lanes, ... (mod.ts sizes `lanes` so
//   that each takes up to 4 steps of PER quads). The row's lanes then combine through workgroup
//   memory in two steps written out in full (groups of 16 partials, then every lane combines its
//   row's groups). Two paths:
//   - length % 4 == 0 (`reduce_rows_aligned`): every row starts on a quad, so a quad is wholly in
//     its row or wholly past its end. Every load is issued unconditionally, its index clamped to
//     the row's last quad (a duplicate: harmless to max and min, dropped from a sum by one compare
//     per quad); a row past the end of x reads the last row and writes nothing. Each operation has
//     its own loop, so the step per element is one add, max or min; max and min see NaN from the
//     bits, once per row (the largest |x| bits exceed those of infinity exactly when a NaN is there)
//     instead of two selects per element.
//   - length % 4 != 0 (`reduce_rows_ragged`): a row starts off a quad boundary, so the components
//     outside it are masked (reading a neighbour's components is harmless) and every element goes
//     through `combine`.
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
const PER = 8u; // quads per invocation per step
const MAX = 1u;
const MIN = 2u;
const MEAN = 3u;

// #include "row_sum.wgsl"
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

// Max or min (NaN-propagating, as `combine`) of `value` over the t invocations of this
// invocation's row (t a power of two <= 256); each of them gets the result. t <= 16: every
// invocation combines its row's t partials (an index past the row clamped to its last lane: a
// duplicate, harmless to max and min). t > 16: 16 invocations each combine 16 partials of one row
// (lanes j, j + t / 16, ...: conflict-free reads), then every invocation combines its row's t / 16
// group results. Two barriers.
fn reduce_extreme(value: f32, lid: u32, t: u32) -> f32 {
  if (t == 1u) {
    return value;
  }
  partials[lid] = value;
  workgroupBarrier();
  if (t <= 16u) {
    let base = lid - lid % t;
    var acc = partials[base];
    acc = combine1(acc, partials[base + min(1u, t - 1u)]);
    acc = combine1(acc, partials[base + min(2u, t - 1u)]);
    acc = combine1(acc, partials[base + min(3u, t - 1u)]);
    acc = combine1(acc, partials[base + min(4u, t - 1u)]);
    acc = combine1(acc, partials[base + min(5u, t - 1u)]);
    acc = combine1(acc, partials[base + min(6u, t - 1u)]);
    acc = combine1(acc, partials[base + min(7u, t - 1u)]);
    acc = combine1(acc, partials[base + min(8u, t - 1u)]);
    acc = combine1(acc, partials[base + min(9u, t - 1u)]);
    acc = combine1(acc, partials[base + min(10u, t - 1u)]);
    acc = combine1(acc, partials[base + min(11u, t - 1u)]);
    acc = combine1(acc, partials[base + min(12u, t - 1u)]);
    acc = combine1(acc, partials[base + min(13u, t - 1u)]);
    acc = combine1(acc, partials[base + min(14u, t - 1u)]);
    acc = combine1(acc, partials[base + min(15u, t - 1u)]);
    workgroupBarrier();
    return acc;
  }
  let per_row = t / 16u;
  if (lid < 16u) {
    let start = (lid / per_row) * t + lid % per_row;
    var acc = partials[start];
    acc = combine1(acc, partials[start + 1u * per_row]);
    acc = combine1(acc, partials[start + 2u * per_row]);
    acc = combine1(acc, partials[start + 3u * per_row]);
    acc = combine1(acc, partials[start + 4u * per_row]);
    acc = combine1(acc, partials[start + 5u * per_row]);
    acc = combine1(acc, partials[start + 6u * per_row]);
    acc = combine1(acc, partials[start + 7u * per_row]);
    acc = combine1(acc, partials[start + 8u * per_row]);
    acc = combine1(acc, partials[start + 9u * per_row]);
    acc = combine1(acc, partials[start + 10u * per_row]);
    acc = combine1(acc, partials[start + 11u * per_row]);
    acc = combine1(acc, partials[start + 12u * per_row]);
    acc = combine1(acc, partials[start + 13u * per_row]);
    acc = combine1(acc, partials[start + 14u * per_row]);
    acc = combine1(acc, partials[start + 15u * per_row]);
    groups[lid] = acc;
  }
  workgroupBarrier();
  let first = (lid / t) * per_row;
  var acc = groups[first];
  acc = combine1(acc, groups[first + min(1u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(2u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(3u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(4u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(5u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(6u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(7u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(8u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(9u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(10u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(11u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(12u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(13u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(14u, per_row - 1u)]);
  acc = combine1(acc, groups[first + min(15u, per_row - 1u)]);
  return acc;
}

// `value` combined over the `lanes` invocations of this invocation's row; each gets the result.
fn row_combine(value: f32, lid: u32, lanes: u32) -> f32 {
  if (params.op == MAX || params.op == MIN) {
    return reduce_extreme(value, lid, lanes);
  }
  return reduce_sum(value, lid, lanes);
}

// The PER quads of one step are written out by hand as v0 .. v7, never as an array indexed in a
// loop: naga bounds-checks every index of a function-scope array and the driver may keep such an
// array in local memory (spilled through L1/L2); see mod.ts. Named values can stay in registers.

// Rows of `length` contiguous elements, length % 4 == 0.
fn reduce_rows_aligned(group: u32, lid: u32) {
  let lanes = params.lanes;
  let lane = lid % lanes;
  let row = group * (WORKGROUP / lanes) + lid / lanes;
  let live = row < params.outer;
  let quads = params.length / 4u;
  let first = min(row, params.outer - 1u) * quads;
  let last = first + quads - 1u;
  var value = 0.0; // this invocation's part of the row, combined across lanes below
  // max and min start from a quad of the row (a lane past its end takes the last one again) and
  // return NaN when the bits show one: WGSL's max() and min() may drop NaN.
  if (params.op == MAX) {
    var acc = x[min(first + lane, last)];
    var bits = vec4u(0u); // the largest magnitude bits of this invocation's elements, per component
    for (var base = lane; base < quads; base += PER * lanes) {
      let v0 = x[min(first + base, last)];
      let v1 = x[min(first + base + lanes, last)];
      let v2 = x[min(first + base + 2u * lanes, last)];
      let v3 = x[min(first + base + 3u * lanes, last)];
      let v4 = x[min(first + base + 4u * lanes, last)];
      let v5 = x[min(first + base + 5u * lanes, last)];
      let v6 = x[min(first + base + 6u * lanes, last)];
      let v7 = x[min(first + base + 7u * lanes, last)];
      acc = max(acc, max(max(max(v0, v1), max(v2, v3)), max(max(v4, v5), max(v6, v7))));
      bits = max(bits, max(max(max((bitcast<vec4u>(v0) & vec4u(0x7fffffffu)), (bitcast<vec4u>(v1) & vec4u(0x7fffffffu))),
                               max((bitcast<vec4u>(v2) & vec4u(0x7fffffffu)), (bitcast<vec4u>(v3) & vec4u(0x7fffffffu)))),
                           max(max((bitcast<vec4u>(v4) & vec4u(0x7fffffffu)), (bitcast<vec4u>(v5) & vec4u(0x7fffffffu))),
                               max((bitcast<vec4u>(v6) & vec4u(0x7fffffffu)), (bitcast<vec4u>(v7) & vec4u(0x7fffffffu))))));
    }
    value = max(max(acc.x, acc.y), max(acc.z, acc.w));
    if (any(bits > vec4u(0x7f800000u))) {
      value = bitcast<f32>(0x7fc00000u);
    }
  } else if (params.op == MIN) {
    var acc = x[min(first + lane, last)];
    var bits = vec4u(0u); // the largest magnitude bits of this invocation's elements, per component
    for (var base = lane; base < quads; base += PER * lanes) {
      let v0 = x[min(first + base, last)];
      let v1 = x[min(first + base + lanes, last)];
      let v2 = x[min(first + base + 2u * lanes, last)];
      let v3 = x[min(first + base + 3u * lanes, last)];
      let v4 = x[min(first + base + 4u * lanes, last)];
      let v5 = x[min(first + base + 5u * lanes, last)];
      let v6 = x[min(first + base + 6u * lanes, last)];
      let v7 = x[min(first + base + 7u * lanes, last)];
      acc = min(acc, min(min(min(v0, v1), min(v2, v3)), min(min(v4, v5), min(v6, v7))));
      bits = max(bits, max(max(max((bitcast<vec4u>(v0) & vec4u(0x7fffffffu)), (bitcast<vec4u>(v1) & vec4u(0x7fffffffu))),
                               max((bitcast<vec4u>(v2) & vec4u(0x7fffffffu)), (bitcast<vec4u>(v3) & vec4u(0x7fffffffu)))),
                           max(max((bitcast<vec4u>(v4) & vec4u(0x7fffffffu)), (bitcast<vec4u>(v5) & vec4u(0x7fffffffu))),
                               max((bitcast<vec4u>(v6) & vec4u(0x7fffffffu)), (bitcast<vec4u>(v7) & vec4u(0x7fffffffu))))));
    }
    value = min(min(acc.x, acc.y), min(acc.z, acc.w));
    if (any(bits > vec4u(0x7f800000u))) {
      value = bitcast<f32>(0x7fc00000u);
    }
  } else {
    var acc = vec4f(0.0);
    for (var base = lane; base < quads; base += PER * lanes) {
      let v0 = x[min(first + base, last)];
      let v1 = x[min(first + base + lanes, last)];
      let v2 = x[min(first + base + 2u * lanes, last)];
      let v3 = x[min(first + base + 3u * lanes, last)];
      let v4 = x[min(first + base + 4u * lanes, last)];
      let v5 = x[min(first + base + 5u * lanes, last)];
      let v6 = x[min(first + base + 6u * lanes, last)];
      let v7 = x[min(first + base + 7u * lanes, last)];
      acc += ((select(vec4f(0.0), v0, base < quads) + select(vec4f(0.0), v1, base + lanes < quads)) +
              (select(vec4f(0.0), v2, base + 2u * lanes < quads) + select(vec4f(0.0), v3, base + 3u * lanes < quads))) +
             ((select(vec4f(0.0), v4, base + 4u * lanes < quads) + select(vec4f(0.0), v5, base + 5u * lanes < quads)) +
              (select(vec4f(0.0), v6, base + 6u * lanes < quads) + select(vec4f(0.0), v7, base + 7u * lanes < quads)));
    }
    value = (acc.x + acc.y) + (acc.z + acc.w);
  }
  let result = row_combine(value, lid, lanes);
  if (live && lane == 0u) {
    out[row] = finish(result);
  }
}

// #include "row_inside.wgsl"

// The row's quad j (of quads, from quad `first`), with `identity` in the components outside the
// row [begin, end) and all four past its last quad.
fn row_quad(j: u32, quads: u32, first: u32, begin: u32, end: u32, identity: vec4f) -> vec4f {
  var v = identity;
  if (j < quads) {
    v = select(identity, x[first + j], inside(first + j, begin, end));
  }
  return v;
}

// Rows of `length` contiguous elements, length % 4 != 0.
fn reduce_rows_ragged(group: u32, lid: u32) {
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
  let result = row_combine(combine1(combine1(acc.x, acc.y), combine1(acc.z, acc.w)), lid, lanes);
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
  if (params.inner != 1u) {
    reduce_columns(group, lid);
  } else if (params.length % 4u == 0u) {
    reduce_rows_aligned(group, lid);
  } else {
    reduce_rows_ragged(group, lid);
  }
}
