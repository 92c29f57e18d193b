// gqa/cache_prefill: a call's rows attending over a KV cache that gqa/cache_write filled: row r (position
// state.pos0 + r) of q [rows, heads, dim], already rotated, attends to positions 0 ..= its own of the
// caches kc, vc [kv_heads, max_seq, dim]; query head h reads KV head h / (heads / kv_heads); out
// [rows, heads, dim]. One workgroup of 128 per (query head, row): grid [heads, rows, splits].
// Positions are taken CHUNK at a time (scores in workgroup memory) with a running max and sum (online
// softmax). dim must be a multiple of 4 (K and V rows are read as vec4s) and at most 256.
// - Scores: four invocations per position, each summing a quarter of the row's vec4s, so a batch of 32
//   positions is in flight at once; the four partial sums meet in workgroup memory. An invocation's
//   vec4s of the key are loaded eight at a time (written out: a loop's loads would wait for each other
//   unless the driver unrolled it).
// - Values: the invocations are floor(128 / (dim / 4)) groups of dim / 4, one vec4 of channels each;
//   group g sums positions g, g + groups, ... in registers, four positions' loads at a time, and the
//   groups' sums are added at the end.
// With one split the result is final. With several (at most 128), each workgroup writes its slice's
// unnormalised output, max and sum to `partial`, and the last workgroup of a head to finish (an atomic
// counter) combines the slices (flash-decoding: every slice's max and sum loaded at once, one invocation
// each, then each channel's slices four loads at a time) and resets the counter, so `counters` must be
// zeros when first used. An empty slice (more splits than positions) contributes max -3e38 and sum 0,
// which the combine weighs as 0.
// #include "decode_state.wgsl"
struct P { heads: u32, kv_heads: u32, dim: u32, max_seq: u32, scale: f32, splits: u32 }
const WG = 128u;
override CHUNK: u32 = 1024u; // positions scored at once (fewer only to test the online softmax), at most MAX_CHUNK
const MAX_CHUNK = 1024u;
const BATCH = 32u; // positions scored at once: four invocations each
@group(0) @binding(0) var<storage, read> q: array<vec4f>;
@group(0) @binding(1) var<storage, read> kc: array<vec4f>;
@group(0) @binding(2) var<storage, read> vc: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read> state: State;
@group(0) @binding(5) var<storage, read_write> partial: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(7) var<uniform> p: P;
var<workgroup> qs: array<vec4f, 64>;
var<workgroup> sc: array<f32, MAX_CHUNK>;
var<workgroup> red: array<f32, WG>;

// #include "cache_functions.wgsl"

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let h = wid.x;
  let row = wid.y;
  let split = wid.z;
  let d4 = p.dim / 4u;
  let kh = h / (p.heads / p.kv_heads);
  let pos = state.pos0 + row;
  let n = pos + 1u;
  let per = (n + p.splits - 1u) / p.splits;
  let begin = min(split * per, n);
  let end = min(begin + per, n);
  let qbase = (row * p.heads + h) * p.dim;
  for (var i = li; i < d4; i += WG) { qs[i] = q[qbase / 4u + i]; }
  workgroupBarrier();
  let groups = WG / d4; // position groups of the value sums
  let g = li / d4;
  let c4 = li % d4;
  let quarter = li % 4u;
  var acc = vec4f(0.0);
  var m = -3.0e38;
  var l = 0.0;
  for (var c0 = begin; c0 < end; c0 += CHUNK) {
    let cn = min(CHUNK, end - c0);
    for (var b0 = 0u; b0 < cn; b0 += BATCH) {
      let t = b0 + li / 4u;
      var s = vec4f(0.0);
      if (t < cn) {
        let kb = (kh * p.max_seq + c0 + t) * d4;
        for (var i = quarter; i < d4; i += 32u) {
          s += key_term(kb, i, d4) + key_term(kb, i + 4u, d4) + key_term(kb, i + 8u, d4) + key_term(kb, i + 12u, d4) +
            key_term(kb, i + 16u, d4) + key_term(kb, i + 20u, d4) + key_term(kb, i + 24u, d4) + key_term(kb, i + 28u, d4);
        }
      }
      store_scores(li, b0, cn, s);
    }
    let chunk = chunk_softmax(li, cn, m); // (m_new, sum)
    let alpha = exp(m - chunk.x);
    l = l * alpha + chunk.y;
    m = chunk.x;
    acc *= alpha;
    if (g < groups) {
      let vb = kh * p.max_seq + c0;
      var t = g;
      for (; t + 3u * groups < cn; t += 4u * groups) {
        acc += (sc[t] * vc[(vb + t) * d4 + c4] + sc[t + groups] * vc[(vb + t + groups) * d4 + c4]) + (sc[t + 2u * groups] * vc[(vb + t + 2u * groups) * d4 + c4] + sc[t + 3u * groups] * vc[(vb + t + 3u * groups) * d4 + c4]);
      }
      for (; t < cn; t += groups) { acc += sc[t] * vc[(vb + t) * d4 + c4]; }
    }
    workgroupBarrier();
  }
  finish(li, row, h, split, qbase, d4, groups, acc, m, l);
}
