// sample/sample: the seeded draw of a generation loop kept on the GPU, as reference.ts's sampleToken
// defines it: temperature, top-k (ties: lower id first), top-p over what is left, min-p, then the
// draw u = drawUniform(seed, step) walked over the kept tokens in ascending id order. The chosen id
// goes to `ids[0]` and `tokens[state.step]`; the step advances by one and the position by `advance`.
// Logits holding NaN or +Infinity give NONFINITE_LOGITS (2^32 - 2), logits with no mass (every one
// -Infinity) NO_POSSIBLE_TOKEN (2^32 - 1).
//
// One workgroup of WG invocations; the work is passes over the vocabulary, vocab / WG ids per
// invocation each:
// - 1 pass: the largest logit / T; 1 pass: p = exp(logit / T - max) written to `probs` (every later
//   pass reads them), with the largest p and the count of nonzero ones.
// - top-k and top-p each keep a prefix of the order (p descending, id ascending), written as a cut
//   `p > v || (p == v && id < tie_end)`: no sort. v is found by a search over its f32 bits (positive
//   floats order as their u32 bits, and p is in (0, 1]: 2^30 values): each pass counts (top-k) or
//   sums (top-p) the kept tokens at or above WAYS - 1 thresholds at once, splitting the range WAYS
//   ways, so 10 passes; then 1 pass measures what lies above v and 1 pass finds tie_end among the
//   tokens equal to v in ascending id order. top-k: 12 passes, top-p: 13 (one more for the kept
//   mass); each runs only when set and able to remove a token.
// - min-p keeps p >= min_p * max(p), a value cut (no pass).
// - 1 pass, the draw: u x (kept mass), walked in ascending id order as a prefix sum: each invocation
//   sums a contiguous range of ids, one invocation scans the WG sums, and the one whose range holds
//   the crossing walks it.
// #include "is_nan.wgsl"
// #include "decode_state.wgsl"
struct P { vocab: u32, advance: u32 }
struct Options { temperature: f32, top_k: u32, top_p: f32, min_p: f32, seed: u32, pad0: u32, pad1: u32, pad2: u32 }
// Kept: p > v, or p == v and id < tie_end.
struct Cut { v: f32, tie_end: u32 }
const WG = 256u;
const WAYS = 8u;
@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> probs: array<f32>;
@group(0) @binding(2) var<storage, read_write> ids: array<u32>;
@group(0) @binding(3) var<storage, read_write> tokens: array<u32>;
@group(0) @binding(4) var<storage, read_write> state: State;
@group(0) @binding(5) var<storage, read> opt: Options;
@group(0) @binding(6) var<uniform> p: P;
var<workgroup> red: array<f32, WG>;
var<workgroup> ways: array<array<f32, WG>, WAYS - 1u>;
var<workgroup> ways_result: array<f32, WAYS - 1u>;
var<workgroup> result_f: f32;
var<workgroup> result_u: u32;
var<workgroup> walker: u32;
var<workgroup> walk_base: f32;
var<workgroup> last_any: atomic<u32>;
var<workgroup> nonfinite: atomic<u32>;
var<workgroup> kept_total: f32;
var<private> cut_k: Cut;
var<private> cut_p: Cut;
var<private> floor_p: f32;

fn pcg_hash(x: u32) -> u32 {
  let s = x * 747796405u + 2891336453u;
  let word = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
  return (word >> 22u) ^ word;
}

fn in_cut(c: Cut, x: f32, i: u32) -> bool {
  return x > c.v || (x == c.v && i < c.tie_end);
}

fn kept(x: f32, i: u32) -> bool {
  return x > 0.0 && in_cut(cut_k, x, i) && in_cut(cut_p, x, i) && x >= floor_p;
}

fn reduce_sum(li: u32, v: f32) -> f32 {
  red[li] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (li < s) { red[li] += red[li + s]; }
    workgroupBarrier();
  }
  if (li == 0u) { result_f = red[0]; }
  return workgroupUniformLoad(&result_f);
}

fn reduce_max(li: u32, v: f32) -> f32 {
  red[li] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (li < s) { red[li] = max(red[li], red[li + s]); }
    workgroupBarrier();
  }
  if (li == 0u) { result_f = red[0]; }
  return workgroupUniformLoad(&result_f);
}

// The count (mass = false) or mass of the kept tokens inside cut c.
fn measure(li: u32, c: Cut, mass: bool) -> f32 {
  var s = 0.0;
  for (var i = li; i < p.vocab; i += WG) {
    let x = probs[i];
    if (kept(x, i) && in_cut(c, x, i)) { s += select(1.0, x, mass); }
  }
  return reduce_sum(li, s);
}

// The count or mass of the kept tokens with p >= each of the thresholds lo + j * stride
// (j = 1 .. WAYS - 1, as f32 bits), in one pass.
fn measure_ways(li: u32, lo: u32, stride: u32, mass: bool) -> array<f32, WAYS - 1u> {
  var s: array<f32, WAYS - 1u>;
  for (var i = li; i < p.vocab; i += WG) {
    let x = probs[i];
    if (kept(x, i)) {
      let w = select(1.0, x, mass);
      let b = bitcast<u32>(x);
      for (var j = 0u; j < WAYS - 1u; j++) {
        if (b >= lo + (j + 1u) * stride) { s[j] += w; }
      }
    }
  }
  for (var j = 0u; j < WAYS - 1u; j++) { ways[j][li] = s[j]; }
  workgroupBarrier();
  for (var h = WG / 2u; h > 0u; h >>= 1u) {
    if (li < h) {
      for (var j = 0u; j < WAYS - 1u; j++) { ways[j][li] += ways[j][li + h]; }
    }
    workgroupBarrier();
  }
  if (li == 0u) {
    for (var j = 0u; j < WAYS - 1u; j++) { ways_result[j] = ways[j][0]; }
  }
  return workgroupUniformLoad(&ways_result);
}

// The shortest prefix of the kept tokens in the order (p descending, id ascending) whose count or
// mass reaches goal (the kept set's own measure reaches it; top is the largest p).
fn shortest_prefix(li: u32, begin: u32, end: u32, goal: f32, mass: bool, top: f32) -> Cut {
  var lo = 0u; // measure(p >= bits lo) >= goal
  var hi = bitcast<u32>(top) + 1u; // measure(p >= bits hi) = 0 < goal
  while (hi - lo > 1u) {
    let stride = (hi - lo + WAYS - 1u) / WAYS;
    var f = measure_ways(li, lo, stride, mass);
    var next_lo = lo;
    var next_hi = hi;
    for (var j = 0u; j < WAYS - 1u; j++) {
      let t = lo + (j + 1u) * stride;
      if (t >= hi) { break; }
      if (f[j] < goal) {
        next_hi = t;
        break;
      }
      next_lo = t;
    }
    lo = next_lo;
    hi = next_hi;
  }
  let v = bitcast<f32>(lo);
  let above = measure(li, Cut(v, 0u), mass);
  // Ties at v in ascending id order: this invocation's share, then the invocation where the prefix reaches goal.
  var s = 0.0;
  for (var i = begin; i < end; i++) {
    let x = probs[i];
    if (kept(x, i) && x == v) { s += select(1.0, x, mass); }
  }
  red[li] = s;
  workgroupBarrier();
  if (li == 0u) {
    result_u = p.vocab; // rounding kept the walk below goal: every tie
    walker = WG;
    var acc = above;
    for (var t = 0u; t < WG; t++) {
      if (acc + red[t] >= goal) {
        walker = t;
        break;
      }
      acc += red[t];
    }
    walk_base = acc;
  }
  workgroupBarrier();
  if (li == walker) {
    var acc = walk_base;
    for (var i = begin; i < end; i++) {
      let x = probs[i];
      if (kept(x, i) && x == v) {
        acc += select(1.0, x, mass);
        if (acc >= goal) {
          result_u = i + 1u;
          break;
        }
      }
    }
  }
  return Cut(v, workgroupUniformLoad(&result_u));
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32) {
  let per = (p.vocab + WG - 1u) / WG;
  let begin = min(li * per, p.vocab);
  let end = min(begin + per, p.vocab);
  let t = opt.temperature;
  cut_k = Cut(0.0, 0u);
  cut_p = Cut(0.0, 0u);
  floor_p = 0.0;
  var m = -0x1.fffffep+127f;
  for (var i = li; i < p.vocab; i += WG) {
    let l = logits[i];
    if (is_nan(l) || bitcast<u32>(l) == 0x7f800000u) { atomicOr(&nonfinite, 1u); }
    m = max(m, l / t);
  }
  m = reduce_max(li, m);
  var top = 0.0;
  var count = 0.0;
  for (var i = li; i < p.vocab; i += WG) {
    let x = exp(logits[i] / t - m);
    probs[i] = x;
    if (x > 0.0) {
      top = max(top, x);
      count += 1.0;
    }
  }
  storageBarrier(); // the walks below read other invocations' probabilities
  top = reduce_max(li, top);
  count = reduce_sum(li, count);
  if (opt.top_k != 0u && f32(opt.top_k) < count) {
    cut_k = shortest_prefix(li, begin, end, f32(opt.top_k), false, top);
  }
  if (opt.top_p < 1.0) {
    let total = measure(li, Cut(0.0, 0u), true);
    cut_p = shortest_prefix(li, begin, end, opt.top_p * total, true, top);
  }
  floor_p = opt.min_p * top;
  // The draw: the first kept id, ascending, whose running mass exceeds u x (kept mass).
  var s = 0.0;
  var last_kept = 0u;
  for (var i = begin; i < end; i++) {
    let x = probs[i];
    if (kept(x, i)) {
      s += x;
      last_kept = i;
    }
  }
  if (s > 0.0) { atomicMax(&last_any, last_kept); }
  red[li] = s;
  workgroupBarrier();
  let step = state.step;
  if (li == 0u) {
    var total = 0.0;
    for (var k = 0u; k < WG; k++) { total += red[k]; }
    let u = f32(pcg_hash(pcg_hash(step) + opt.seed) >> 8u) / 16777216.0;
    let goal = u * total;
    walker = WG;
    var acc = 0.0;
    for (var k = 0u; k < WG; k++) {
      if (acc + red[k] > goal) {
        walker = k;
        break;
      }
      acc += red[k];
    }
    walk_base = acc;
    result_f = goal;
    kept_total = total;
  }
  workgroupBarrier();
  // No running sum exceeded the goal (rounding): the last kept id, as the reference does.
  if (li == 0u) { result_u = atomicLoad(&last_any); }
  workgroupBarrier();
  if (li == walker) {
    var acc = walk_base;
    var chosen = last_kept;
    for (var i = begin; i < end; i++) {
      let x = probs[i];
      if (kept(x, i)) {
        acc += x;
        if (acc > result_f) {
          chosen = i;
          break;
        }
      }
    }
    result_u = chosen;
  }
  workgroupBarrier();
  if (li == 0u) {
    var id = min(result_u, p.vocab - 1u);
    if (!(kept_total > 0.0)) { id = 4294967295u; } // NO_POSSIBLE_TOKEN
    if (atomicLoad(&nonfinite) != 0u) { id = 4294967294u; } // NONFINITE_LOGITS
    ids[0] = id;
    tokens[step] = id;
    state.step = step + 1u;
    state.pos0 += p.advance;
  }
}