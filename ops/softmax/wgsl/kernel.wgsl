// softmax/kernel: out[r, c] = exp(x[r, c] - max_r) / sum_c exp(x[r, c] - max_r), x is [rows, cols].
//
// Memory is read and written in quads (vec4s): quad q holds elements 4q .. 4q + 3. A row covers the
// quads from the one holding its first element to the one holding its last; components outside the
// row are masked (a row need not start on a quad boundary when cols % 4 != 0). Reading a
// neighbour's components is harmless; writing is done per component for a partial quad, so no
// element outside the row is ever written. The bindings are 16-byte padded, so every quad is
// readable.
//
// `threads` invocations (a power of two) share a row, 256 / threads rows per workgroup; lane k of a
// row takes quads k, k + threads, ..., PER of them per chunk, all loads issued before first use.
// - resident = 1 (the row fits one chunk): the row is read once into registers; the workgroup
//   reduces the maxima, exponentiates in place, reduces the sums, and writes. One read, one write.
// - resident = 0 (longer rows, one row per workgroup): each invocation keeps a running (max, sum)
//   over its chunks, rescaling the sum when the max grows; after the reductions the row is read a
//   second time to write the output, last chunk first, so that the chunks read last (the likeliest
//   still in L2) are read again first.
// Reductions go through workgroup memory in two steps (groups of up to 16 partials, then every
// invocation combines its row's groups): two barriers each, whatever the row's width.
// Workgroups beyond 65,535 fold into y: workgroup = id.x + id.y * num_workgroups.x.
struct Params {
  rows: u32,
  cols: u32,
  threads: u32,   // invocations per row, a power of two <= 256
  resident: u32,  // 1 when every row fits PER * threads quads
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP = 256u;
const PER = 8u;    // quads per invocation per chunk (mod.ts sizes `threads` with the same number)
const GROUP = 16u; // partials one invocation combines in the first step of a reduction
// The starting maximum, the lowest finite f32 (WGSL has no infinity literal). A row of nothing but
// -inf never raises it, so every exp(x - max) is 0, the sum is 0, and 0 * (1 / 0) gives NaN, as
// torch does.
const LOWEST = -0x1.fffffep+127f;

var<workgroup> partials: array<f32, WORKGROUP>;
var<workgroup> groups: array<f32, WORKGROUP>;

// The maximum (take_max) or the sum of `value` over the `threads` invocations of this invocation's
// row; each of them gets the result. Consecutive calls need no barrier in between: every read of
// `partials` precedes the second barrier and every read of `groups` precedes the next call's first.
fn row_reduce(value: f32, lid: u32, threads: u32, take_max: bool) -> f32 {
  if (threads == 1u) {
    return value;
  }
  partials[lid] = value;
  workgroupBarrier();
  let width = min(threads, GROUP);
  let per_row = threads / width;
  if (lid < WORKGROUP / width) {
    // Group lid % per_row of row lid / per_row: lanes j, j + per_row, ... (conflict-free reads).
    let start = (lid / per_row) * threads + lid % per_row;
    var acc = partials[start];
    for (var i = 1u; i < width; i++) {
      let other = partials[start + i * per_row];
      acc = select(acc + other, max(acc, other), take_max);
    }
    groups[lid] = acc;
  }
  workgroupBarrier();
  let first = (lid / threads) * per_row;
  var acc = groups[first];
  for (var i = 1u; i < per_row; i++) {
    let other = groups[first + i];
    acc = select(acc + other, max(acc, other), take_max);
  }
  return acc;
}

// Which components of quad q belong to the row [begin, end).
fn inside(q: u32, begin: u32, end: u32) -> vec4<bool> {
  let e = vec4u(4u * q) + vec4u(0u, 1u, 2u, 3u);
  return (e >= vec4u(begin)) & (e < vec4u(end));
}

fn hmax(v: vec4f) -> f32 {
  return max(max(v.x, v.y), max(v.z, v.w));
}

// Writes the components of y that belong to the row: one store for a whole quad, else one
// component at a time (the quad's other components belong to the neighbouring row).
fn store(q: u32, y: vec4f, mask: vec4<bool>) {
  if (all(mask)) {
    out[q] = y;
    return;
  }
  if (mask.x) {
    out[q].x = y.x;
  }
  if (mask.y) {
    out[q].y = y.y;
  }
  if (mask.z) {
    out[q].z = y.z;
  }
  if (mask.w) {
    out[q].w = y.w;
  }
}

// This invocation's row, set once at the start of main: its quads are first .. first + quads - 1,
// its elements begin .. end - 1; quads = 0 for a row past the end.
var<private> first: u32;
var<private> quads: u32;
var<private> begin: u32;
var<private> end: u32;

// Which components of the row's quad j belong to the row (none when j is past its last quad).
fn keep(j: u32) -> vec4<bool> {
  return inside(first + j, begin, end) & vec4<bool>(j < quads);
}

// The row's quad j, with `fill` in the components outside the row (all four past its last quad).
fn fetch(j: u32, fill: f32) -> vec4f {
  var v = vec4f(fill);
  if (j < quads) {
    v = select(v, x[first + j], inside(first + j, begin, end));
  }
  return v;
}

// Writes y as the row's quad j, if the row has one.
fn put(j: u32, y: vec4f) {
  if (j < quads) {
    store(first + j, y, inside(first + j, begin, end));
  }
}

// exp(v - m) in the components of the row's quad j that belong to the row, 0 elsewhere: a masked
// component never counts, even when m is LOWEST (a row of -inf), where exp(LOWEST - m) would be 1.
fn exp_in(j: u32, v: vec4f, m: f32) -> vec4f {
  return select(vec4f(0.0), exp(v - m), keep(j));
}

// The PER quads of one chunk are written out by hand as v0 .. v7, never as an array indexed in a
// loop: naga bounds-checks every index of a function-scope array and the driver may keep such an
// array in local memory (spilled through L1/L2), the suspected reason the array-based kernels
// reached only 7-9% of the H200's bandwidth (see mod.ts). Named values can stay in registers.
@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let t = params.threads;
  let lane = lid % t;
  let row = (wid.x + wid.y * grid.x) * (WORKGROUP / t) + lid / t;
  begin = row * params.cols;
  end = begin + params.cols;
  first = begin / 4u;
  quads = select(0u, (end + 3u) / 4u - first, row < params.rows);
  // Quad k of this invocation's chunk at `base` is base + k * t (PER = 8 of them).
  let j0 = lane;
  let j1 = lane + t;
  let j2 = lane + 2u * t;
  let j3 = lane + 3u * t;
  let j4 = lane + 4u * t;
  let j5 = lane + 5u * t;
  let j6 = lane + 6u * t;
  let j7 = lane + 7u * t;

  if (params.resident != 0u) {
    let v0 = fetch(j0, LOWEST);
    let v1 = fetch(j1, LOWEST);
    let v2 = fetch(j2, LOWEST);
    let v3 = fetch(j3, LOWEST);
    let v4 = fetch(j4, LOWEST);
    let v5 = fetch(j5, LOWEST);
    let v6 = fetch(j6, LOWEST);
    let v7 = fetch(j7, LOWEST);
    let own_max = max(max(max(hmax(v0), hmax(v1)), max(hmax(v2), hmax(v3))),
                      max(max(hmax(v4), hmax(v5)), max(hmax(v6), hmax(v7))));
    let row_max = row_reduce(own_max, lid, t, true);
    let e0 = exp_in(j0, v0, row_max);
    let e1 = exp_in(j1, v1, row_max);
    let e2 = exp_in(j2, v2, row_max);
    let e3 = exp_in(j3, v3, row_max);
    let e4 = exp_in(j4, v4, row_max);
    let e5 = exp_in(j5, v5, row_max);
    let e6 = exp_in(j6, v6, row_max);
    let e7 = exp_in(j7, v7, row_max);
    let one = vec4f(1.0);
    let own_sum = dot(e0, one) + dot(e1, one) + dot(e2, one) + dot(e3, one) +
                  dot(e4, one) + dot(e5, one) + dot(e6, one) + dot(e7, one);
    let scale = 1.0 / row_reduce(own_sum, lid, t, false);
    put(j0, e0 * scale);
    put(j1, e1 * scale);
    put(j2, e2 * scale);
    put(j3, e3 * scale);
    put(j4, e4 * scale);
    put(j5, e5 * scale);
    put(j6, e6 * scale);
    put(j7, e7 * scale);
    return;
  }

  let span = PER * t;
  var own_max = LOWEST;
  var own_sum = 0.0; // sum of exp(x - own_max) over this invocation's elements
  for (var base = 0u; base < quads; base += span) {
    let v0 = fetch(base + j0, LOWEST);
    let v1 = fetch(base + j1, LOWEST);
    let v2 = fetch(base + j2, LOWEST);
    let v3 = fetch(base + j3, LOWEST);
    let v4 = fetch(base + j4, LOWEST);
    let v5 = fetch(base + j5, LOWEST);
    let v6 = fetch(base + j6, LOWEST);
    let v7 = fetch(base + j7, LOWEST);
    let chunk_max = max(max(max(hmax(v0), hmax(v1)), max(hmax(v2), hmax(v3))),
                        max(max(hmax(v4), hmax(v5)), max(hmax(v6), hmax(v7))));
    if (chunk_max > own_max) {
      own_sum *= exp(own_max - chunk_max);
      own_max = chunk_max;
    }
    let one = vec4f(1.0);
    own_sum += dot(exp_in(base + j0, v0, own_max), one) + dot(exp_in(base + j1, v1, own_max), one) +
               dot(exp_in(base + j2, v2, own_max), one) + dot(exp_in(base + j3, v3, own_max), one) +
               dot(exp_in(base + j4, v4, own_max), one) + dot(exp_in(base + j5, v5, own_max), one) +
               dot(exp_in(base + j6, v6, own_max), one) + dot(exp_in(base + j7, v7, own_max), one);
  }
  let row_max = row_reduce(own_max, lid, t, true);
  let scale = 1.0 / row_reduce(own_sum * exp(own_max - row_max), lid, t, false);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = (chunk - 1u) * span;
    let v0 = fetch(base + j0, 0.0);
    let v1 = fetch(base + j1, 0.0);
    let v2 = fetch(base + j2, 0.0);
    let v3 = fetch(base + j3, 0.0);
    let v4 = fetch(base + j4, 0.0);
    let v5 = fetch(base + j5, 0.0);
    let v6 = fetch(base + j6, 0.0);
    let v7 = fetch(base + j7, 0.0);
    put(base + j0, exp(v0 - row_max) * scale);
    put(base + j1, exp(v1 - row_max) * scale);
    put(base + j2, exp(v2 - row_max) * scale);
    put(base + j3, exp(v3 - row_max) * scale);
    put(base + j4, exp(v4 - row_max) * scale);
    put(base + j5, exp(v5 - row_max) * scale);
    put(base + j6, exp(v6 - row_max) * scale);
    put(base + j7, exp(v7 - row_max) * scale);
  }
}
