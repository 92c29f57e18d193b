// layernorm/kernel: out[n, c] = (x[n, c] - mean) * inverseSqrt(var + eps) * weight[c] + bias[c],
// x is [rows, d], var the biased variance (divided by d); has_weight / has_bias = 0 mean ones / zeros.
//
// Memory is read and written in quads (vec4s): quad q holds elements 4q .. 4q + 3. A row covers the
// quads from the one holding its first element to the one holding its last; components outside the
// row are masked (rows start off a quad boundary when d % 4 != 0), and a partial quad is written
// one component at a time, so no element outside the row is ever written. The bindings are
// 16-byte padded, so every quad is readable.
//
// `threads` invocations (a power of two) share a row, 256 / threads rows per workgroup; lane k of a
// row takes quads k, k + threads, ..., PER of them per chunk, all loads issued before first use.
// Every value is first shifted by the row's first element, so a row like 1000 + noise is summed as
// small numbers and its mean is not rounded at the scale of 1000. Each invocation computes the
// count, mean and sum of squared deviations of each chunk in two passes over its registers and
// merges chunks with Chan's update; the row's mean is then the count-weighted sum of the
// invocations' means, and its sum of squared deviations sum_t (m2_t + n_t * (mean_t - mean)^2):
// two reductions, each of two barriers (groups of up to 16 partials, then every invocation
// combines its row's groups), no cancellation anywhere.
// - resident = 1 (the row fits one chunk): the row is read once and written from registers.
// - resident = 0 (longer rows, one row per workgroup): the row is read a second time to write it,
//   last chunk first, so that the chunks read last (the likeliest still in L2) are read again first.
// Workgroups beyond 65,535 fold into y: workgroup = id.x + id.y * num_workgroups.x.
struct Params {
  rows: u32,
  d: u32,
  has_weight: u32,
  has_bias: u32,
  eps: f32,
  threads: u32,   // invocations per row, a power of two <= 256
  resident: u32,  // 1 when every row fits PER * threads quads
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<vec4f>;
@group(0) @binding(2) var<storage, read> bias: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(4) var<uniform> params: Params;

const WORKGROUP = 256u;
const PER = 8u;    // quads per invocation per chunk (mod.ts sizes `threads` with the same number)
const GROUP = 16u; // partials one invocation adds in the first step of a reduction

var<workgroup> partials: array<f32, WORKGROUP>;
var<workgroup> groups: array<f32, WORKGROUP>;

// The sum of `value` over the `threads` invocations of this invocation's row; each gets the result.
// Consecutive calls need no barrier in between: every read of `partials` precedes the second
// barrier and every read of `groups` precedes the next call's first.
fn row_sum(value: f32, lid: u32, threads: u32) -> f32 {
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
      acc += partials[start + i * per_row];
    }
    groups[lid] = acc;
  }
  workgroupBarrier();
  let first = (lid / threads) * per_row;
  var acc = groups[first];
  for (var i = 1u; i < per_row; i++) {
    acc += groups[first + i];
  }
  return acc;
}

// Which components of quad q belong to the row [begin, end).
fn inside(q: u32, begin: u32, end: u32) -> vec4<bool> {
  let e = vec4u(4u * q) + vec4u(0u, 1u, 2u, 3u);
  return (e >= vec4u(begin)) & (e < vec4u(end));
}

fn affine_at(of_bias: bool, i: u32) -> vec4f {
  if (of_bias) {
    return bias[i];
  }
  return weight[i];
}

// The weight (or, with of_bias, the bias) of quad q's components: one load when rows start on quad
// boundaries, else one per component in the row (u32 arithmetic wraps, so i + c is exact).
fn affine(of_bias: bool, q: u32, mask: vec4<bool>) -> vec4f {
  let i = 4u * q - begin;
  if (params.d % 4u == 0u) {
    return affine_at(of_bias, i / 4u);
  }
  var w = vec4f(0.0);
  if (mask.x) {
    w.x = affine_at(of_bias, i / 4u)[i % 4u];
  }
  if (mask.y) {
    w.y = affine_at(of_bias, (i + 1u) / 4u)[(i + 1u) % 4u];
  }
  if (mask.z) {
    w.z = affine_at(of_bias, (i + 2u) / 4u)[(i + 2u) % 4u];
  }
  if (mask.w) {
    w.w = affine_at(of_bias, (i + 3u) / 4u)[(i + 3u) % 4u];
  }
  return w;
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
// its elements begin .. end - 1 (quads = 0 for a row past the end); shift is its first element.
var<private> first: u32;
var<private> quads: u32;
var<private> begin: u32;
var<private> end: u32;
var<private> shift: f32;

// Which components of the row's quad j belong to the row (none when j is past its last quad).
fn keep(j: u32) -> vec4<bool> {
  return inside(first + j, begin, end) & vec4<bool>(j < quads);
}

// The row's quad j shifted, with 0 in the components outside the row (all four past its last quad).
fn fetch(j: u32) -> vec4f {
  var v = vec4f(0.0);
  if (j < quads) {
    v = select(v, x[first + j] - shift, inside(first + j, begin, end));
  }
  return v;
}

// How many of the row's quad j's components belong to the row.
fn count_in(j: u32) -> f32 {
  return dot(select(vec4f(0.0), vec4f(1.0), keep(j)), vec4f(1.0));
}

// The squared deviations from m of the components of the row's quad j (v, shifted) in the row.
fn deviations_in(j: u32, v: vec4f, m: f32) -> f32 {
  let dev = select(vec4f(0.0), v - m, keep(j));
  return dot(dev, dev);
}

// Writes the normalised v (a shifted quad), times weight plus bias, as the row's quad j, if any.
fn put(j: u32, v: vec4f, row_mean: f32, scale: f32) {
  if (j < quads) {
    let mask = inside(first + j, begin, end);
    var y = (v - row_mean) * scale;
    if (params.has_weight != 0u) {
      y *= affine(false, first + j, mask);
    }
    if (params.has_bias != 0u) {
      y += affine(true, first + j, mask);
    }
    store(first + j, y, mask);
  }
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
  let live = row < params.rows;
  begin = row * params.d;
  end = begin + params.d;
  first = begin / 4u;
  quads = select(0u, (end + 3u) / 4u - first, live);
  shift = 0.0;
  if (live) {
    shift = x[first][begin % 4u];
  }
  // Quad k of this invocation's chunk at `base` is base + k * t (PER = 8 of them).
  let j0 = lane;
  let j1 = lane + t;
  let j2 = lane + 2u * t;
  let j3 = lane + 3u * t;
  let j4 = lane + 4u * t;
  let j5 = lane + 5u * t;
  let j6 = lane + 6u * t;
  let j7 = lane + 7u * t;
  let one = vec4f(1.0);

  if (params.resident != 0u) {
    let v0 = fetch(j0);
    let v1 = fetch(j1);
    let v2 = fetch(j2);
    let v3 = fetch(j3);
    let v4 = fetch(j4);
    let v5 = fetch(j5);
    let v6 = fetch(j6);
    let v7 = fetch(j7);
    // One chunk: its (count, mean, squared deviations) are the invocation's; an invocation with
    // nothing of the row (lane >= quads) keeps (0, 0, 0).
    let count = count_in(j0) + count_in(j1) + count_in(j2) + count_in(j3) +
                count_in(j4) + count_in(j5) + count_in(j6) + count_in(j7);
    let sum = dot(v0, one) + dot(v1, one) + dot(v2, one) + dot(v3, one) +
              dot(v4, one) + dot(v5, one) + dot(v6, one) + dot(v7, one);
    let mean = select(0.0, sum / count, count > 0.0);
    let deviations = deviations_in(j0, v0, mean) + deviations_in(j1, v1, mean) +
                     deviations_in(j2, v2, mean) + deviations_in(j3, v3, mean) +
                     deviations_in(j4, v4, mean) + deviations_in(j5, v5, mean) +
                     deviations_in(j6, v6, mean) + deviations_in(j7, v7, mean);
    let row_mean = row_sum(count * mean, lid, t) / f32(params.d);
    let spread = mean - row_mean;
    let row_deviations = row_sum(deviations + count * spread * spread, lid, t);
    let scale = inverseSqrt(row_deviations / f32(params.d) + params.eps);
    put(j0, v0, row_mean, scale);
    put(j1, v1, row_mean, scale);
    put(j2, v2, row_mean, scale);
    put(j3, v3, row_mean, scale);
    put(j4, v4, row_mean, scale);
    put(j5, v5, row_mean, scale);
    put(j6, v6, row_mean, scale);
    put(j7, v7, row_mean, scale);
    return;
  }

  let span = PER * t;
  var count = 0.0;        // elements this invocation has seen
  var mean = 0.0;         // their mean (shifted)
  var deviations = 0.0;   // their sum of squared deviations from `mean`
  // base + j0 < quads, so every chunk holds at least one element of the row.
  for (var base = 0u; base + j0 < quads; base += span) {
    let v0 = fetch(base + j0);
    let v1 = fetch(base + j1);
    let v2 = fetch(base + j2);
    let v3 = fetch(base + j3);
    let v4 = fetch(base + j4);
    let v5 = fetch(base + j5);
    let v6 = fetch(base + j6);
    let v7 = fetch(base + j7);
    let chunk_count = count_in(base + j0) + count_in(base + j1) + count_in(base + j2) + count_in(base + j3) +
                      count_in(base + j4) + count_in(base + j5) + count_in(base + j6) + count_in(base + j7);
    let chunk_sum = dot(v0, one) + dot(v1, one) + dot(v2, one) + dot(v3, one) +
                    dot(v4, one) + dot(v5, one) + dot(v6, one) + dot(v7, one);
    let chunk_mean = chunk_sum / chunk_count;
    let chunk_deviations = deviations_in(base + j0, v0, chunk_mean) + deviations_in(base + j1, v1, chunk_mean) +
                           deviations_in(base + j2, v2, chunk_mean) + deviations_in(base + j3, v3, chunk_mean) +
                           deviations_in(base + j4, v4, chunk_mean) + deviations_in(base + j5, v5, chunk_mean) +
                           deviations_in(base + j6, v6, chunk_mean) + deviations_in(base + j7, v7, chunk_mean);
    // Chan et al.: merge (chunk_count, chunk_mean, chunk_deviations) into the running triple.
    let total = count + chunk_count;
    let delta = chunk_mean - mean;
    mean += delta * (chunk_count / total);
    deviations += chunk_deviations + delta * delta * count * (chunk_count / total);
    count = total;
  }
  let row_mean = row_sum(count * mean, lid, t) / f32(params.d);
  let spread = mean - row_mean;
  let row_deviations = row_sum(deviations + count * spread * spread, lid, t);
  let scale = inverseSqrt(row_deviations / f32(params.d) + params.eps);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = (chunk - 1u) * span;
    let v0 = fetch(base + j0);
    let v1 = fetch(base + j1);
    let v2 = fetch(base + j2);
    let v3 = fetch(base + j3);
    let v4 = fetch(base + j4);
    let v5 = fetch(base + j5);
    let v6 = fetch(base + j6);
    let v7 = fetch(base + j7);
    put(base + j0, v0, row_mean, scale);
    put(base + j1, v1, row_mean, scale);
    put(base + j2, v2, row_mean, scale);
    put(base + j3, v3, row_mean, scale);
    put(base + j4, v4, row_mean, scale);
    put(base + j5, v5, row_mean, scale);
    put(base + j6, v6, row_mean, scale);
    put(base + j7, v7, row_mean, scale);
  }
}
