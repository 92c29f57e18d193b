// gqa/combine_wide: the second pass of flash-decoding for many splits (gqaPlan takes it above 64), the
// same merge as gqa/combine: with M the largest split max, out = sum_s exp(m_s - M) o_s /
// sum_s exp(m_s - M) l_s, where o_s is split s's unnormalised output, m_s its max and l_s its sum; a split
// with l_s = 0 adds nothing, a row with every l_s = 0 is zeros. part_out [rows, splits, Dv], part_stats
// [rows, splits, 2] (m, l), out [rows, Dv], Dv % 4 == 0 and Dv <= 128.
//
// One workgroup of 128 invocations per row and group of 8 quads of Dv (`groups` = ceil(Dv / 32) per row;
// workgroups past 65,535 fold into y), so that a row's 32 quads are merged by 4 workgroups. Invocation
// (quad t % 8, lane t / 8) takes splits lane, lane + 16, ..., 128 splits at a time: it issues the 8 loads
// of the first 128 splits' outputs, and one split's statistics, before anything else, so that they are
// in flight while M is reduced; then each invocation turns its split's statistics into a weight in
// workgroup memory, the loads are weighted and summed, and the 16 lanes and the weighted sums of l are
// reduced at the end. Measured on the H200 right after gqa/decode (32 rows, Dv = 128; log
// harness/baselines/nvidia-h200-log/28-gqa-ab2.txt): 0.0114 ms for 256 splits where gqa/combine takes
// 0.0174, but 0.0100 for 64 splits where gqa/combine takes 0.0082.

struct Params {
  rows: u32,    // B * H * L
  splits: u32,
  dvq: u32,     // Dv / 4
  groups: u32,  // ceil(dvq / QG)
}

@group(0) @binding(0) var<storage, read> part_out: array<vec4f>;
@group(0) @binding(1) var<storage, read> part_stats: array<vec2f>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const THREADS = 128u; // also the splits taken at a time
const QG = 8u;        // quads per workgroup
const LANES = 16u;    // THREADS / QG: invocations per quad
const LOWEST = -0x1.fffffep+127f;

// #include "live_score.wgsl"

var<workgroup> scratch: array<f32, THREADS>;
var<workgroup> partials: array<f32, 16>;
var<workgroup> weights: array<f32, THREADS>;
var<workgroup> lanes: array<vec4f, THREADS>;

// The max (is_max) or the sum of `value` over the workgroup; every invocation gets it.
fn reduce(value: f32, t: u32, is_max: bool) -> f32 {
  scratch[t] = value;
  workgroupBarrier();
  if (t < 16u) {
    var r = scratch[8u * t];
    for (var e = 1u; e < 8u; e++) {
      let x = scratch[8u * t + e];
      r = select(r + x, max(r, x), is_max);
    }
    partials[t] = r;
  }
  workgroupBarrier();
  var r = partials[0];
  for (var e = 1u; e < 16u; e++) {
    r = select(r + partials[e], max(r, partials[e]), is_max);
  }
  return r;
}

// Output quad d of split s of row `first`'s splits, read at s clamped to the last of the n from s0 and
// zero past it: its weight there is 0, and 0 times a NaN or infinite output of the split it repeats
// would be NaN.
fn part(first: u32, s0: u32, s: u32, n: u32, d: u32) -> vec4f {
  return select(part_out[(first + s0 + min(s, n - 1u)) * params.dvq + d], vec4f(0.0), s >= n);
}

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) t: u32,
) {
  let index = wid.x + wid.y * grid.x;
  if (index >= params.rows * params.groups) {
    return;
  }
  let row = index / params.groups;
  let quad = index % params.groups * QG + t % QG;
  let lane = t / QG;
  let d = min(quad, params.dvq - 1u);
  let first = row * params.splits; // this row's split 0

  // The first 128 splits' loads: 8 outputs per invocation and one split's statistics.
  var n = min(THREADS, params.splits);
  var o0 = part(first, 0u, lane, n, d);
  var o1 = part(first, 0u, lane + LANES, n, d);
  var o2 = part(first, 0u, lane + 2u * LANES, n, d);
  var o3 = part(first, 0u, lane + 3u * LANES, n, d);
  var o4 = part(first, 0u, lane + 4u * LANES, n, d);
  var o5 = part(first, 0u, lane + 5u * LANES, n, d);
  var o6 = part(first, 0u, lane + 6u * LANES, n, d);
  var o7 = part(first, 0u, lane + 7u * LANES, n, d);
  var st = part_stats[first + min(t, n - 1u)];

  var own_top = select(LOWEST, st.x, t < n && has_live_keys(st.y));
  for (var s = t + THREADS; s < params.splits; s += THREADS) {
    let other = part_stats[first + s];
    own_top = select(own_top, max(own_top, other.x), has_live_keys(other.y));
  }
  let top = reduce(own_top, t, true);

  var acc = vec4f(0.0);
  var own_total = 0.0;
  for (var s0 = 0u; s0 < params.splits; s0 += THREADS) {
    // Split s0 + t's weight (0 past the last split, where part() reads zeros).
    let w = select(0.0, exp(st.x - top), t < n && has_live_keys(st.y));
    own_total += w * st.y;
    weights[t] = w;
    workgroupBarrier();
    acc += (weights[lane] * o0 + weights[lane + LANES] * o1) +
      (weights[lane + 2u * LANES] * o2 + weights[lane + 3u * LANES] * o3) +
      ((weights[lane + 4u * LANES] * o4 + weights[lane + 5u * LANES] * o5) +
        (weights[lane + 6u * LANES] * o6 + weights[lane + 7u * LANES] * o7));
    workgroupBarrier();
    let s1 = s0 + THREADS;
    if (s1 < params.splits) {
      n = min(THREADS, params.splits - s1);
      o0 = part(first, s1, lane, n, d);
      o1 = part(first, s1, lane + LANES, n, d);
      o2 = part(first, s1, lane + 2u * LANES, n, d);
      o3 = part(first, s1, lane + 3u * LANES, n, d);
      o4 = part(first, s1, lane + 4u * LANES, n, d);
      o5 = part(first, s1, lane + 5u * LANES, n, d);
      o6 = part(first, s1, lane + 6u * LANES, n, d);
      o7 = part(first, s1, lane + 7u * LANES, n, d);
      st = part_stats[first + s1 + min(t, n - 1u)];
    }
  }
  let total = reduce(own_total, t, false);

  lanes[t] = acc;
  workgroupBarrier();
  if (lane == 0u && quad < params.dvq) {
    var sum = acc;
    for (var e = 1u; e < LANES; e++) {
      sum += lanes[e * QG + t];
    }
    // A row with no live key (total 0) is sum itself: every weight is 0, so it is 0, or NaN where a
    // masked key's v was NaN or infinite (0 * inf), as torch's p @ v.
    out[row * params.dvq + quad] = select(sum / total, sum, total == 0.0);
  }
}
