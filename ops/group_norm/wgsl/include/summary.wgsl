// The statistics of group_norm, stable for rows with a large mean (100 +- 1): every invocation forms
// the count, mean and sum of squared deviations from that mean (M2) of each chunk of up to 16 values
// it reads (a two-pass over registers), and merges them into a running (count, mean, M2) by Chan et
// al.'s pairwise update; the 256 invocations' triples merge the same way through workgroup memory.
// Nothing subtracts two large nearly equal sums, as E[x^2] - E[x]^2 would. Needs x (array<vec4f>),
// params and WG, PER (params.wgsl).
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

// The workgroup's merged summary, given to every invocation. Called once per workgroup, in uniform
// control flow.
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

fn in_range(j: u32, end: u32) -> vec4f {
  return select(vec4f(0.0), vec4f(1.0), vec4<bool>(j < end));
}

fn element(e: u32) -> f32 {
  return x[e / 4u][e % 4u];
}

// This invocation's summary of quads [begin, end) of the row whose first quad is `first` (aligned).
fn aligned_summary(first: u32, begin: u32, end: u32, lid: u32) -> vec3f {
  let last = first + end - 1u;
  var summary = vec3f(0.0);
  for (var base = begin; base < end; base += WG * PER) {
    let j = base + lid;
    let v0 = x[min(first + j, last)];
    let v1 = x[min(first + j + WG, last)];
    let v2 = x[min(first + j + 2u * WG, last)];
    let v3 = x[min(first + j + 3u * WG, last)];
    summary = merge(summary, chunk(v0, v1, v2, v3, in_range(j, end), in_range(j + WG, end),
      in_range(j + 2u * WG, end), in_range(j + 3u * WG, end)));
  }
  return summary;
}

// This invocation's summary of elements [begin, end) of the row whose first element is `first` (ragged).
fn ragged_summary(first: u32, begin: u32, end: u32, lid: u32) -> vec3f {
  let last = first + end - 1u;
  var summary = vec3f(0.0);
  for (var base = begin; base < end; base += WG * PER) {
    let j = base + lid;
    let v = vec4f(element(min(first + j, last)), element(min(first + j + WG, last)),
      element(min(first + j + 2u * WG, last)), element(min(first + j + 3u * WG, last)));
    let mask = select(vec4f(0.0), vec4f(1.0), vec4u(j, j + WG, j + 2u * WG, j + 3u * WG) < vec4u(end));
    summary = merge(summary, chunk(v, vec4f(0.0), vec4f(0.0), vec4f(0.0), mask, vec4f(0.0), vec4f(0.0),
      vec4f(0.0)));
  }
  return summary;
}
