// attention/weighted_sum: the second of attention's two dispatches. For each row (b, h, i) of scores
// [B, H, L, S]: p = softmax of the row's live scores (not LOWEST or -inf; see scores.wgsl), then
// out[b, h, i] = sum_j p_j v[b, h / group, j], v [B, H / group, S, Dv], any Dv. A row with no live score
// is written as zeros (aten::_safe_softmax), not NaN.
//
// One workgroup of 64 invocations per row (rows beyond 65,535 fold into y): the row's max, then its
// sum of exp(s - max), each reduced through workgroup memory; then, for each group of 64 output
// columns, the row's probabilities are recomputed 64 keys at a time into workgroup memory and each
// invocation adds its column's share.

struct Params {
  rows: u32,   // B * H * L
  L: u32,
  S: u32,
  H: u32,
  group: u32,  // query heads per KV head
  Dv: u32,
}

@group(0) @binding(0) var<storage, read> scores: array<f32>;
@group(0) @binding(1) var<storage, read> v: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const LANES = 64u;
const LOWEST = -0x1.fffffep+127f;

// #include "live_score.wgsl"

var<workgroup> partial: array<f32, LANES>;
var<workgroup> probs: array<f32, LANES>;
// Whether key t of the staged 64 is hidden by causal (scores.wgsl writes LOWEST there): no part of the
// row, so its v is not read (a key masked by -inf is, times its probability 0: NaN for a NaN v, as
// torch).
var<workgroup> unread: array<bool, LANES>;

// The max (is_max) or the sum of `value` over the workgroup; every invocation gets it.
fn reduce(value: f32, lane: u32, is_max: bool) -> f32 {
  partial[lane] = value;
  workgroupBarrier();
  for (var stride = LANES / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      let other = partial[lane + stride];
      partial[lane] = select(partial[lane] + other, max(partial[lane], other), is_max);
    }
    workgroupBarrier();
  }
  let result = partial[0];
  workgroupBarrier();
  return result;
}

@compute @workgroup_size(64)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lane: u32,
) {
  let row = wid.x + wid.y * grid.x;
  if (row >= params.rows) {
    return;
  }
  let bh = row / params.L;
  let b = bh / params.H;
  let h = bh % params.H;
  let kv_heads = params.H / params.group;
  let v_row0 = (b * kv_heads + h / params.group) * params.S;
  let s_row = row * params.S;

  var own_max = LOWEST;
  for (var j = lane; j < params.S; j += LANES) {
    own_max = max(own_max, scores[s_row + j]);
  }
  let row_max = reduce(own_max, lane, true);
  var own_sum = 0.0;
  for (var j = lane; j < params.S; j += LANES) {
    let s = scores[s_row + j];
    own_sum += select(0.0, exp(s - row_max), live(s));
  }
  let row_sum = reduce(own_sum, lane, false);
  let inv = select(1.0 / row_sum, 0.0, row_sum == 0.0);

  for (var col0 = 0u; col0 < params.Dv; col0 += LANES) {
    let col = col0 + lane;
    var acc = 0.0;
    for (var key0 = 0u; key0 < params.S; key0 += LANES) {
      let j = key0 + lane;
      var p = 0.0;
      var hidden = true;
      if (j < params.S) {
        let s = scores[s_row + j];
        p = select(0.0, exp(s - row_max), live(s));
        hidden = bitcast<u32>(s) == 0xff7fffffu;
      }
      probs[lane] = p;
      unread[lane] = hidden;
      workgroupBarrier();
      let keys = min(LANES, params.S - key0);
      if (col < params.Dv) {
        for (var t = 0u; t < keys; t++) {
          acc += select(probs[t] * v[(v_row0 + key0 + t) * params.Dv + col], 0.0, unread[t]);
        }
      }
      workgroupBarrier();
    }
    if (col < params.Dv) {
      out[row * params.Dv + col] = acc * inv;
    }
  }
}
