// gqa/combine: the second pass of flash-decoding. For each output row (b, h, i), merges the splits that
// gqa/decode wrote: with M the largest split max, out = sum_s exp(m_s - M) o_s / sum_s exp(m_s - M) l_s,
// where o_s is split s's unnormalised output, m_s its max and l_s its sum. A split with no live key has
// l_s = 0 and o_s = 0 and adds nothing; a row with no live key anywhere (every l_s = 0) is zeros.
// part_out [rows, splits, Dv], part_stats [rows, splits, 2] (m, l), out [rows, Dv], Dv % 4 == 0 and
// Dv <= 128.
//
// One workgroup of 128 invocations per row (rows past 65,535 fold into y). M is reduced over all 128
// invocations; then, 128 splits at a time, each invocation turns one split's statistics into its
// weight in workgroup memory, and invocation (quad = t % 32, lane = t / 32) adds the weighted quad of
// every fourth split's output, four loads in flight; the lanes and the weighted sums of l are reduced
// at the end. (A first version looped over the splits in one invocation per quad, one dependent load
// pair per split: 26 us for 64 splits on the H200, latency, not bandwidth.)

struct Params {
  rows: u32,    // B * H * L
  splits: u32,
  dvq: u32,     // Dv / 4
}

@group(0) @binding(0) var<storage, read> part_out: array<vec4f>;
@group(0) @binding(1) var<storage, read> part_stats: array<vec2f>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const THREADS = 128u;
const QUADS = 32u;
const LANES = 4u; // THREADS / QUADS
const LOWEST = -0x1.fffffep+127f;

// #include "live_score.wgsl"

var<workgroup> scratch: array<f32, THREADS>;
var<workgroup> weights: array<f32, THREADS>;
var<workgroup> lanes: array<vec4f, 96>; // lanes 1-3 x QUADS

// The max (is_max) or the sum of `value` over the workgroup; every invocation gets it.
fn reduce(value: f32, t: u32, is_max: bool) -> f32 {
  scratch[t] = value;
  workgroupBarrier();
  for (var stride = THREADS / 2u; stride > 0u; stride /= 2u) {
    if (t < stride) {
      let other = scratch[t + stride];
      scratch[t] = select(scratch[t] + other, max(scratch[t], other), is_max);
    }
    workgroupBarrier();
  }
  let result = scratch[0];
  workgroupBarrier();
  return result;
}

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) t: u32,
) {
  let row = wid.x + wid.y * grid.x;
  if (row >= params.rows) {
    return;
  }
  let first = row * params.splits; // this row's split 0

  var own_top = LOWEST;
  for (var s = t; s < params.splits; s += THREADS) {
    let st = part_stats[first + s];
    own_top = select(own_top, max(own_top, st.x), has_live_keys(st.y));
  }
  let top = reduce(own_top, t, true);

  let quad = t % QUADS;
  let lane = t / QUADS;
  let q = min(quad, params.dvq - 1u);
  var acc = vec4f(0.0);
  var own_total = 0.0;
  for (var s0 = 0u; s0 < params.splits; s0 += THREADS) {
    var w = 0.0;
    if (s0 + t < params.splits) {
      let st = part_stats[first + s0 + t];
      w = select(0.0, exp(st.x - top), has_live_keys(st.y));
      own_total += w * st.y;
    }
    weights[t] = w;
    workgroupBarrier();
    let n = min(THREADS, params.splits - s0);
    let base = first + s0;
    var e = lane;
    for (; e + 3u * LANES < n; e += 4u * LANES) {
      let o0 = part_out[(base + e) * params.dvq + q];
      let o1 = part_out[(base + e + LANES) * params.dvq + q];
      let o2 = part_out[(base + e + 2u * LANES) * params.dvq + q];
      let o3 = part_out[(base + e + 3u * LANES) * params.dvq + q];
      acc += weights[e] * o0 + weights[e + LANES] * o1 + weights[e + 2u * LANES] * o2 + weights[e + 3u * LANES] * o3;
    }
    for (; e < n; e += LANES) {
      acc += weights[e] * part_out[(base + e) * params.dvq + q];
    }
    workgroupBarrier();
  }
  let total = reduce(own_total, t, false);

  if (lane > 0u) {
    lanes[(lane - 1u) * QUADS + quad] = acc;
  }
  workgroupBarrier();
  if (lane == 0u && quad < params.dvq) {
    let sum = acc + lanes[quad] + lanes[QUADS + quad] + lanes[2u * QUADS + quad];
    // A row with no live key (total 0) is sum itself: every weight is 0, so it is 0, or NaN where a
    // masked key's v was NaN or infinite (0 * inf), as torch's p @ v.
    out[row * params.dvq + quad] = select(sum / total, sum, total == 0.0);
  }
}
