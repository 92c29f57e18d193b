// group_norm/kernel: x is [N, C, L]; each (sample, group) of C / G consecutive channels is a
// contiguous row of d = (C / G) * L elements, normalised with one mean and one (biased) variance:
// out = (x - mean) * inverseSqrt(var + eps) * weight[c] + bias[c], c the element's channel.
//
// One workgroup per row (rows beyond 65,535 fold into y). Two passes over the row:
// 1. Statistics, stable for rows with a large mean (100 +- 1): each invocation takes chunks of its
//    share of the row, forms each chunk's count, mean and sum of squared deviations from that
//    chunk's own mean (a two-pass over registers), and merges them into a running (count, mean, M2)
//    by Chan et al.'s pairwise update; the 256 invocations' triples merge the same way through
//    workgroup memory. Nothing subtracts two large nearly equal sums, as E[x^2] - E[x]^2 would.
// 2. Normalisation: the row is read again, last block first (the blocks read last in pass 1 are the
//    likeliest still in L2), and written with the channel's weight and bias.
//
// aligned (d % 4 == 0 and L % 4 == 0): every row starts on a quad and every quad lies in one
// channel, so x and out are read and written as vec4s, PER quads per invocation per block, all
// loads of a block before the first is used. Otherwise (ragged) the same walk takes PER scalars,
// read and written through their quad's components.
struct Params {
  rows: u32,        // N * G
  d: u32,           // elements per row: (C / G) * L
  l: u32,           // elements per channel
  per_group: u32,   // channels per group, C / G
  groups: u32,      // G
  eps: f32,
  has_weight: u32,
  has_bias: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(4) var<uniform> params: Params;

const WG = 256u;
const PER = 4u; // quads (aligned) or scalars (ragged) per invocation per block

var<workgroup> counts: array<f32, WG>;
var<workgroup> means: array<f32, WG>;
var<workgroup> m2s: array<f32, WG>;

// Chan et al.'s merge of two (count, mean, M2) summaries: M2 is the sum of squared deviations from
// the summary's mean. An empty side returns the other unchanged.
fn merge(a: vec3f, b: vec3f) -> vec3f {
  let n = a.x + b.x;
  if (b.x == 0.0) {
    return a;
  }
  if (a.x == 0.0) {
    return b;
  }
  let delta = b.y - a.y;
  let share = b.x / n;
  return vec3f(n, a.y + delta * share, a.z + b.z + delta * delta * a.x * share);
}

// The summary of up to 16 values in four vec4s, component k of quad q counted when mask_q[k] is 1.
fn chunk(v0: vec4f, v1: vec4f, v2: vec4f, v3: vec4f, m0: vec4f, m1: vec4f, m2: vec4f, m3: vec4f) -> vec3f {
  let n = dot(m0 + m1 + m2 + m3, vec4f(1.0));
  if (n == 0.0) {
    return vec3f(0.0);
  }
  let mean = dot(v0 * m0 + v1 * m1 + v2 * m2 + v3 * m3, vec4f(1.0)) / n;
  let d0 = (v0 - mean) * m0;
  let d1 = (v1 - mean) * m1;
  let d2 = (v2 - mean) * m2;
  let d3 = (v3 - mean) * m3;
  return vec3f(n, mean, dot(d0, d0) + dot(d1, d1) + dot(d2, d2) + dot(d3, d3));
}

// The workgroup's merged summary, given to every invocation.
fn reduce_summary(mine: vec3f, lid: u32) -> vec3f {
  counts[lid] = mine.x;
  means[lid] = mine.y;
  m2s[lid] = mine.z;
  workgroupBarrier();
  for (var width = WG / 2u; width > 0u; width /= 2u) {
    if (lid < width) {
      let merged = merge(vec3f(counts[lid], means[lid], m2s[lid]),
        vec3f(counts[lid + width], means[lid + width], m2s[lid + width]));
      counts[lid] = merged.x;
      means[lid] = merged.y;
      m2s[lid] = merged.z;
    }
    workgroupBarrier();
  }
  return vec3f(counts[0], means[0], m2s[0]);
}

fn gamma(c: u32) -> f32 {
  return select(1.0, weight[c], params.has_weight != 0u);
}

fn beta(c: u32) -> f32 {
  return select(0.0, bias[c], params.has_bias != 0u);
}

fn in_row(j: u32, length: u32) -> vec4f {
  return select(vec4f(0.0), vec4f(1.0), vec4<bool>(j < length));
}

// ---------------------------------------------------------------- aligned: quads

fn aligned(row: u32, lid: u32) {
  let quads = params.d / 4u;
  let first = row * quads;
  let last = first + quads - 1u;
  let span = WG * PER;
  var summary = vec3f(0.0);
  for (var base = 0u; base < quads; base += span) {
    let j = base + lid;
    let v0 = x[min(first + j, last)];
    let v1 = x[min(first + j + WG, last)];
    let v2 = x[min(first + j + 2u * WG, last)];
    let v3 = x[min(first + j + 3u * WG, last)];
    summary = merge(summary, chunk(v0, v1, v2, v3, in_row(j, quads), in_row(j + WG, quads),
      in_row(j + 2u * WG, quads), in_row(j + 3u * WG, quads)));
  }
  let stats = reduce_summary(summary, lid);
  let mean = stats.y;
  let rstd = inverseSqrt(stats.z / stats.x + params.eps);
  let channel0 = (row % params.groups) * params.per_group;
  for (var block = (quads + span - 1u) / span; block > 0u; block--) {
    let j = (block - 1u) * span + lid;
    let v0 = x[min(first + j, last)];
    let v1 = x[min(first + j + WG, last)];
    let v2 = x[min(first + j + 2u * WG, last)];
    let v3 = x[min(first + j + 3u * WG, last)];
    put_quad(first, j, quads, v0, mean, rstd, channel0);
    put_quad(first, j + WG, quads, v1, mean, rstd, channel0);
    put_quad(first, j + 2u * WG, quads, v2, mean, rstd, channel0);
    put_quad(first, j + 3u * WG, quads, v3, mean, rstd, channel0);
  }
}

fn put_quad(first: u32, j: u32, quads: u32, v: vec4f, mean: f32, rstd: f32, channel0: u32) {
  if (j < quads) {
    let c = channel0 + (4u * j) / params.l;
    out[first + j] = (v - mean) * (rstd * gamma(c)) + beta(c);
  }
}

// ---------------------------------------------------------------- ragged: scalars

fn element(e: u32) -> f32 {
  return x[e / 4u][e % 4u];
}

fn ragged(row: u32, lid: u32) {
  let d = params.d;
  let first = row * d;
  let last = first + d - 1u;
  let span = WG * PER;
  var summary = vec3f(0.0);
  for (var base = 0u; base < d; base += span) {
    let j = base + lid;
    let v = vec4f(element(min(first + j, last)), element(min(first + j + WG, last)),
      element(min(first + j + 2u * WG, last)), element(min(first + j + 3u * WG, last)));
    let mask = select(vec4f(0.0), vec4f(1.0), vec4u(j, j + WG, j + 2u * WG, j + 3u * WG) < vec4u(d));
    summary = merge(summary, chunk(v, vec4f(0.0), vec4f(0.0), vec4f(0.0), mask, vec4f(0.0), vec4f(0.0),
      vec4f(0.0)));
  }
  let stats = reduce_summary(summary, lid);
  let mean = stats.y;
  let rstd = inverseSqrt(stats.z / stats.x + params.eps);
  let channel0 = (row % params.groups) * params.per_group;
  for (var block = (d + span - 1u) / span; block > 0u; block--) {
    for (var k = 0u; k < PER; k++) {
      let j = (block - 1u) * span + lid + k * WG;
      if (j < d) {
        let c = channel0 + j / params.l;
        let e = first + j;
        out[e / 4u][e % 4u] = (element(e) - mean) * (rstd * gamma(c)) + beta(c);
      }
    }
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * grid.x;
  if (row >= params.rows) {
    return;
  }
  if (params.d % 4u == 0u && params.l % 4u == 0u) {
    aligned(row, lid);
  } else {
    ragged(row, lid);
  }
}
