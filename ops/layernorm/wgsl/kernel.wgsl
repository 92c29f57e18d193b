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
// boundaries, else one per component in the row.
fn affine(of_bias: bool, q: u32, begin: u32, mask: vec4<bool>) -> vec4f {
  if (params.d % 4u == 0u) {
    return affine_at(of_bias, (4u * q - begin) / 4u);
  }
  var w = vec4f(0.0);
  for (var c = 0u; c < 4u; c++) {
    if (mask[c]) {
      let i = 4u * q + c - begin;
      w[c] = affine_at(of_bias, i / 4u)[i % 4u];
    }
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
  for (var c = 0u; c < 4u; c++) {
    if (mask[c]) {
      out[q][c] = y[c];
    }
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let threads = params.threads;
  let lane = lid % threads;
  let row = (wid.x + wid.y * grid.x) * (WORKGROUP / threads) + lid / threads;
  let live = row < params.rows;
  let begin = row * params.d;
  let end = begin + params.d;
  let first = begin / 4u;
  // Quads covering the row; none for a row past the end (a surplus slot of the last workgroup).
  let quads = select(0u, (end + 3u) / 4u - first, live);
  var shift = 0.0;
  if (live) {
    shift = x[first][begin % 4u];
  }
  // Quads per chunk; a resident row is one chunk, so each loop below runs once and the last one
  // finds the row still in registers.
  let span = PER * threads;
  var v: array<vec4f, PER>;

  var count = 0.0;        // elements this invocation has seen
  var mean = 0.0;         // their mean (shifted)
  var deviations = 0.0;   // their sum of squared deviations from `mean`
  for (var base = lane; base < quads; base += span) {
    var chunk_count = 0.0;
    var chunk_sum = 0.0;
    for (var k = 0u; k < PER; k++) {
      let j = base + k * threads;
      v[k] = vec4f(0.0);
      if (j < quads) {
        let mask = inside(first + j, begin, end);
        v[k] = select(vec4f(0.0), x[first + j] - shift, mask);
        chunk_count += dot(select(vec4f(0.0), vec4f(1.0), mask), vec4f(1.0));
      }
      chunk_sum += dot(v[k], vec4f(1.0));
    }
    let chunk_mean = chunk_sum / chunk_count;
    var chunk_deviations = 0.0;
    for (var k = 0u; k < PER; k++) {
      let j = base + k * threads;
      if (j < quads) {
        let dev = select(vec4f(0.0), v[k] - chunk_mean, inside(first + j, begin, end));
        chunk_deviations += dot(dev, dev);
      }
    }
    // Chan et al.: merge (chunk_count, chunk_mean, chunk_deviations) into the running triple.
    let total = count + chunk_count;
    let delta = chunk_mean - mean;
    mean += delta * (chunk_count / total);
    deviations += chunk_deviations + delta * delta * count * (chunk_count / total);
    count = total;
  }
  let row_mean = row_sum(count * mean, lid, threads) / f32(params.d);
  let spread = mean - row_mean;
  let row_deviations = row_sum(deviations + count * spread * spread, lid, threads);
  let scale = inverseSqrt(row_deviations / f32(params.d) + params.eps);

  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = lane + (chunk - 1u) * span;
    for (var k = 0u; k < PER; k++) {
      let j = base + k * threads;
      if (j < quads) {
        if (params.resident == 0u) {
          v[k] = x[first + j] - shift;
        }
        v[k] = (v[k] - row_mean) * scale;
      }
    }
    if (params.has_weight != 0u) {
      for (var k = 0u; k < PER; k++) {
        let j = base + k * threads;
        if (j < quads) {
          v[k] *= affine(false, first + j, begin, inside(first + j, begin, end));
        }
      }
    }
    if (params.has_bias != 0u) {
      for (var k = 0u; k < PER; k++) {
        let j = base + k * threads;
        if (j < quads) {
          v[k] += affine(true, first + j, begin, inside(first + j, begin, end));
        }
      }
    }
    for (var k = 0u; k < PER; k++) {
      let j = base + k * threads;
      if (j < quads) {
        store(first + j, v[k], inside(first + j, begin, end));
      }
    }
  }
}
