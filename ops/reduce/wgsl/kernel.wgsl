// reduce/kernel: out[o, i] = sum | max | min | mean of x[o, 0..length, i], x viewed as [outer, length, inner].
//
// A workgroup of 256 invocations reduces 256 / lanes outputs ("slots"), each with `lanes`
// invocations that stride along the reduced axis and then combine through workgroup memory.
// When the reduced axis is the last (inner = 1), the lanes of one output are adjacent invocations
// (lane_stride = 1), so they read consecutive addresses of its row; a long row gets a whole
// workgroup. Otherwise the outputs are adjacent (lane_stride = 256 / lanes), so neighbouring
// invocations read neighbouring inner positions at the same step along the axis.
// The grid may be folded into y beyond 65,535 workgroups.
struct Params {
  outputs: u32,      // outer * inner
  length: u32,       // length of the reduced axis
  inner: u32,        // product of the axes after it
  lanes: u32,        // invocations per output, a power of two <= 256
  lane_stride: u32,  // distance between lanes of one output: 1, or 256 / lanes
  op: u32,           // 0 = sum, 1 = max, 2 = min, 3 = mean
}

const WORKGROUP_SIZE: u32 = 256u;
const MAX: u32 = 1u;
const MIN: u32 = 2u;
const MEAN: u32 = 3u;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// NaN is recognised from its bits: a float comparison may be folded away by a compiler that
// assumes NaN never occurs, which WGSL allows.
fn is_nan(v: f32) -> bool {
  return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

// max and min propagate NaN, as torch.amax / amin do; WGSL's max() and min() would drop it.
fn combine(a: f32, b: f32) -> f32 {
  if (params.op == MAX || params.op == MIN) {
    if (is_nan(a)) {
      return a;
    }
    if (is_nan(b)) {
      return b;
    }
    return select(min(a, b), max(a, b), params.op == MAX);
  }
  return a + b;
}

@compute @workgroup_size(256)
fn main(
  @builtin(local_invocation_index) t: u32,
  @builtin(workgroup_id) group: vec3u,
  @builtin(num_workgroups) groups: vec3u,
) {
  let slots = WORKGROUP_SIZE / params.lanes;
  var lane = t % params.lanes;
  var slot = t / params.lanes;
  if (params.lane_stride != 1u) {
    lane = t / slots;
    slot = t % slots;
  }
  let n = (group.x + group.y * groups.x) * slots + slot;
  let live = n < params.outputs;

  // Lanes start from the identity of the sum (0) or, for max and min, from the row's first
  // element, which is an identity for them and needs no infinity.
  var acc = 0.0;
  if (live && params.length > 0u) {
    let base = (n / params.inner) * params.length * params.inner + n % params.inner;
    if (params.op == MAX || params.op == MIN) {
      acc = x[base];
    }
    for (var l = lane; l < params.length; l += params.lanes) {
      acc = combine(acc, x[base + l * params.inner]);
    }
  }
  partial[t] = acc;
  workgroupBarrier();
  for (var s = params.lanes / 2u; s > 0u; s /= 2u) {
    if (lane < s) {
      partial[t] = combine(partial[t], partial[t + s * params.lane_stride]);
    }
    workgroupBarrier();
  }

  if (live && lane == 0u) {
    var result = partial[t];
    if (params.op == MEAN) {
      // The mean of an empty axis is 0 / 0, written as NaN's bits rather than computed.
      result = select(result / f32(params.length), bitcast<f32>(0x7fc00000u), params.length == 0u);
    }
    out[n] = result;
  }
}
