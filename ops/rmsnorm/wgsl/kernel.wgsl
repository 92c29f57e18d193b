// rmsnorm/kernel: out[n, c] = x[n, c] * inverseSqrt(mean_c(x[n, c]^2) + eps) * weight[n % groups, c],
// x is [rows, d]; groups = 0 means no weight (ones).
//
// Memory is read and written in quads (vec4s): quad q holds elements 4q .. 4q + 3. A row covers the
// quads from the one holding its first element to the one holding its last; components outside the
// row are masked (rows start off a quad boundary when d % 4 != 0), and a partial quad is written
// one component at a time, so no element outside the row is ever written. The bindings are
// 16-byte padded, so every quad is readable.
//
// `threads` invocations (a power of two) share a row, 256 / threads rows per workgroup; lane k of a
// row takes quads k, k + threads, ..., PER of them per chunk, all loads issued before first use.
// - resident = 1 (the row fits one chunk): the row is read once into registers, its sum of squares
//   reduced through workgroup memory, and the row scaled and written from registers.
// - resident = 0 (longer rows, one row per workgroup): the sum of squares is accumulated over the
//   chunks, and the row is read a second time to write it, last chunk first, so that the chunks
//   read last (the likeliest still in L2) are read again first.
// The reduction takes two barriers (groups of up to 16 partials, then every invocation combines its
// row's groups). Workgroups beyond 65,535 fold into y: workgroup = id.x + id.y * num_workgroups.x.
struct Params {
  rows: u32,
  d: u32,
  groups: u32,
  eps: f32,
  threads: u32,   // invocations per row, a power of two <= 256
  resident: u32,  // 1 when every row fits PER * threads quads
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const WORKGROUP = 256u;
const PER = 8u;    // quads per invocation per chunk (mod.ts sizes `threads` with the same number)
const GROUP = 16u; // partials one invocation adds in the first step of the reduction

var<workgroup> partials: array<f32, WORKGROUP>;
var<workgroup> groups: array<f32, WORKGROUP>;

// The sum of `value` over the `threads` invocations of this invocation's row; each gets the result.
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

// The weights of quad q's components (ones without a weight), from weight row `gamma` (its first
// element's index): one load when rows start on quad boundaries, else one per component in the row.
fn weights(q: u32, begin: u32, gamma: u32, mask: vec4<bool>) -> vec4f {
  if (params.groups == 0u) {
    return vec4f(1.0);
  }
  if (params.d % 4u == 0u) {
    return weight[(gamma + 4u * q - begin) / 4u];
  }
  var w = vec4f(0.0);
  for (var c = 0u; c < 4u; c++) {
    if (mask[c]) {
      let i = gamma + 4u * q + c - begin;
      w[c] = weight[i / 4u][i % 4u];
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
  let begin = row * params.d;
  let end = begin + params.d;
  let first = begin / 4u;
  // Quads covering the row; none for a row past the end (a surplus slot of the last workgroup).
  let quads = select(0u, (end + 3u) / 4u - first, row < params.rows);
  let gamma = select(0u, (row % max(params.groups, 1u)) * params.d, params.groups > 0u);
  // Quads per chunk; a resident row is one chunk, so each loop below runs once and the second one
  // finds the row still in registers.
  let span = PER * threads;
  var v: array<vec4f, PER>;

  var squares = 0.0;
  for (var base = lane; base < quads; base += span) {
    for (var k = 0u; k < PER; k++) {
      let j = base + k * threads;
      v[k] = vec4f(0.0);
      if (j < quads) {
        v[k] = select(vec4f(0.0), x[first + j], inside(first + j, begin, end));
      }
    }
    for (var k = 0u; k < PER; k++) {
      squares += dot(v[k], v[k]);
    }
  }
  let scale = inverseSqrt(row_sum(squares, lid, threads) / f32(params.d) + params.eps);

  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = lane + (chunk - 1u) * span;
    if (params.resident == 0u) {
      for (var k = 0u; k < PER; k++) {
        let j = base + k * threads;
        if (j < quads) {
          v[k] = x[first + j];
        }
      }
    }
    for (var k = 0u; k < PER; k++) {
      let j = base + k * threads;
      if (j < quads) {
        v[k] *= scale * weights(first + j, begin, gamma, inside(first + j, begin, end));
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
