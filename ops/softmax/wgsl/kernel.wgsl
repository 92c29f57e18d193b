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
  let begin = row * params.cols;
  let end = begin + params.cols;
  let first = begin / 4u;
  // Quads covering the row; none for a row past the end (a surplus slot of the last workgroup).
  let quads = select(0u, (end + 3u) / 4u - first, row < params.rows);
  var v: array<vec4f, PER>;

  if (params.resident != 0u) {
    var own_max = LOWEST;
    for (var k = 0u; k < PER; k++) {
      let j = lane + k * threads;
      v[k] = vec4f(LOWEST);
      if (j < quads) {
        v[k] = select(vec4f(LOWEST), x[first + j], inside(first + j, begin, end));
      }
      own_max = max(own_max, hmax(v[k]));
    }
    let row_max = row_reduce(own_max, lid, threads, true);
    var own_sum = 0.0;
    for (var k = 0u; k < PER; k++) {
      let j = lane + k * threads;
      if (j < quads) {
        v[k] = select(vec4f(0.0), exp(v[k] - row_max), inside(first + j, begin, end));
        own_sum += dot(v[k], vec4f(1.0));
      }
    }
    let scale = 1.0 / row_reduce(own_sum, lid, threads, false);
    for (var k = 0u; k < PER; k++) {
      let j = lane + k * threads;
      if (j < quads) {
        store(first + j, v[k] * scale, inside(first + j, begin, end));
      }
    }
    return;
  }

  let span = PER * threads;
  var own_max = LOWEST;
  var own_sum = 0.0; // sum of exp(x - own_max) over this invocation's elements
  for (var base = lane; base < quads; base += span) {
    var chunk_max = LOWEST;
    for (var k = 0u; k < PER; k++) {
      let j = base + k * threads;
      v[k] = vec4f(LOWEST);
      if (j < quads) {
        v[k] = select(vec4f(LOWEST), x[first + j], inside(first + j, begin, end));
      }
      chunk_max = max(chunk_max, hmax(v[k]));
    }
    if (chunk_max > own_max) {
      own_sum *= exp(own_max - chunk_max);
      own_max = chunk_max;
    }
    for (var k = 0u; k < PER; k++) {
      let j = base + k * threads;
      if (j < quads) {
        own_sum += dot(select(vec4f(0.0), exp(v[k] - own_max), inside(first + j, begin, end)), vec4f(1.0));
      }
    }
  }
  let row_max = row_reduce(own_max, lid, threads, true);
  let scale = 1.0 / row_reduce(own_sum * exp(own_max - row_max), lid, threads, false);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = lane + (chunk - 1u) * span;
    for (var k = 0u; k < PER; k++) {
      let j = base + k * threads;
      if (j < quads) {
        v[k] = x[first + j];
      }
    }
    for (var k = 0u; k < PER; k++) {
      let j = base + k * threads;
      if (j < quads) {
        store(first + j, exp(v[k] - row_max) * scale, inside(first + j, begin, end));
      }
    }
  }
}
