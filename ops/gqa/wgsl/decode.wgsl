// gqa/decode: the first pass of flash-decoding. Each workgroup takes one KV head of one batch, a chunk of
// CHUNK = 128 keys (a "split") and up to 4 query rows of that KV head's group (row r = g * L + i: query head
// h = kv_head * group + g, query row i), reads each K and V row of the chunk once for all of them, and
// writes per row the chunk's unnormalised output sum_j exp(s_j - m) v_j with its max m and its sum
// l = sum_j exp(s_j - m). gqa/combine merges the splits. Decode attention is bandwidth-bound: a KV cache
// of 8,192 positions must be read once per KV head, not once per query head, and spread over enough
// workgroups to keep the memory system busy, which one workgroup per head is not: at S = 8,192 and 8 KV
// heads, 512 workgroups of 128 invocations, several per multiprocessor, so that one workgroup's K reads
// overlap another's V reads.
// q [B, H, L, D], k [B, kv_heads, S, D], v [B, kv_heads, S, Dv], or all token-major ([B, L, H, D],
// [B, S, kv_heads, D], ...: the strides q_head, q_step, kv_head, kv_step, as flash_attention's kernels
// take them), D and Dv multiples of 4 and at most 128 (rows are vec4s: 32 quads); part_out
// [B * H * L, splits, Dv], part_stats [B * H * L, splits, 2], their rows in the output's order (the
// layout's), so that gqa/combine writes out row by row in either layout.
//
// 1. scores: invocation t takes key t of the chunk and computes its 4 rows' scores, reading its K row
//    (quads unrolled by 8: eight loads in flight) against the rows of q staged in workgroup memory;
//    a dead score (key past S, hidden by causal, a row past the group) is LOWEST; any score <= LOWEST
//    (a mask of -inf included) counts as masked.
// 2. statistics: each row's max over the chunk (partial maxima of 8 keys, then of 16 partials), then
//    every invocation turns its key's scores into exp(s - max) in place.
// 3. output: invocation (quad = t % 32, lane = t / 32) adds p_j * v_j over keys j = lane, lane + 4, ...
//    of the chunk for the 4 rows (each V row is read by one 32-invocation group: 512 contiguous bytes;
//    eight keys per step in flight), and the row sums l alongside; the 4 lanes are summed through
//    workgroup memory in two halvings. Under causal, the chunk's keys that not all 4 rows see are taken
//    one at a time, each added only to the rows that see it.
//
// Tried on the H200 and not kept (log harness/baselines/nvidia-h200-log/28-gqa-ab*.txt, 32/8 heads,
// D = 128, S = 8,192, where this kernel takes 0.031 ms): blocks of 64 keys on 256 invocations, each
// issuing all 16 of its K and V loads of a block first (K read 4 invocations a key, coalesced), then an
// online softmax across 1-8 blocks a split, 0.036-0.045 ms; the same on 128 invocations with 32-key
// blocks, 0.034-0.041 (best at S = 32,768: 0.0906 ms against this kernel's 0.0938); either with the next
// block's loads issued before the current one is computed, 0.041-0.052; the K loop unrolled by 16,
// 0.034; four V keys in flight instead of eight (the previous version), 0.032. And (34-gqa-ab.txt,
// where this kernel took 0.0313-0.0315 ms): K read by 8 invocations a key, so that a warp's loads
// cover four keys' 128-byte runs, partial dot products reduced in workgroup memory, 0.052-0.053 (at
// S = 32,768, 0.163-0.172 against 0.0934); the first eight V loads of phase 3 issued before the
// reductions, 0.0331.
//
// Where the time goes (34-gqa-ablation.txt, decode alone at S = 8,192, median of 30): with every K
// and V load replaced by a value computed from its index, the kernel still takes 0.0164 ms (staging,
// the nine barriers, the reductions and the partials' writes of 512 workgroups in one wave); with V's
// loads alone 0.0183, K's alone 0.0230, both 0.0315, where a plain read of the same 64 MiB takes
// 0.0203. The combine adds 0.0052 ms to the pass in every case. So half the time is the kernel's
// structure, not its bytes, and K's loads (one row per invocation) overlap that structure worse than V's.

struct Params {
  L: u32,
  S: u32,
  H: u32,
  group: u32,     // query heads per KV head
  rows: u32,      // group * L: rows of one KV head
  dq: u32,        // D / 4
  dvq: u32,       // Dv / 4
  splits: u32,    // ceil(S / CHUNK)
  scale: f32,
  causal: u32,
  offset: i32,    // key j is visible to row i under causal iff j <= i + offset
  masked: u32,    // 1 when `mask` holds an additive mask
  mask_b: u32,    // strides of the mask over b, h, i (0 where it broadcasts); 1 over j
  mask_h: u32,
  mask_i: u32,
  row_groups: u32, // ceil(rows / 4)
  BKV: u32,        // B * kv_heads
  q_head: u32,     // rows of q (and out) between two heads: L, or 1 token-major
  q_step: u32,     // rows of q (and out) between two query rows: 1, or H token-major
  kv_head: u32,    // rows of k (and v) between two KV heads: S, or 1 token-major
  kv_step: u32,    // rows of k (and v) between two keys: 1, or kv_heads token-major
}

@group(0) @binding(0) var<storage, read> q: array<vec4f>;
@group(0) @binding(1) var<storage, read> k: array<vec4f>;
@group(0) @binding(2) var<storage, read> v: array<vec4f>;
@group(0) @binding(3) var<storage, read> mask: array<f32>;
@group(0) @binding(4) var<storage, read_write> part_out: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> part_stats: array<vec2f>;
@group(0) @binding(6) var<uniform> params: Params;

const CHUNK = 128u;  // keys per split: one per invocation
const LANES = 4u;    // CHUNK / QUADS: invocations sharing a quad of the output
const QUADS = 32u;   // most quads of a q, k or v row (D, Dv <= 128)
const LOWEST = -0x1.fffffep+127f;

// #include "live_score.wgsl"

var<workgroup> q_rows: array<vec4f, 128>;      // 4 rows x QUADS
var<workgroup> probs: array<vec4f, CHUNK>;     // per key, the 4 rows' scores, then probabilities
var<workgroup> partial_max: array<vec4f, 16>;  // per group of 8 keys, the 4 rows' maxima
var<workgroup> row_max: vec4f;
var<workgroup> lanes: array<vec4f, 256>;       // 2 lanes x 4 rows x QUADS, halved twice
var<workgroup> lane_sums: array<vec4f, 2>;

// The query head and row of the group's row r (r < rows).
fn head_of(kv_head: u32, r: u32) -> u32 {
  return kv_head * params.group + r / params.L;
}

// The 4 staged rows' dot products with `kq`, quad d of a K row.
fn dots(d: u32, kq: vec4f) -> vec4f {
  return vec4f(dot(q_rows[d], kq), dot(q_rows[QUADS + d], kq), dot(q_rows[2u * QUADS + d], kq), dot(q_rows[3u * QUADS + d], kq));
}

// Score of row r (of 4 at row0) for key j: dot * scale plus the mask, or LOWEST when dead.
fn finish(dot_qk: f32, b: u32, kv_head: u32, r: u32, j: u32) -> f32 {
  let live_row = r < params.rows;
  let rr = min(r, params.rows - 1u);
  let h = head_of(kv_head, rr);
  let i = rr % params.L;
  var s = dot_qk * params.scale;
  if (params.masked != 0u) {
    s += mask[b * params.mask_b + h * params.mask_h + i * params.mask_i + min(j, params.S - 1u)];
  }
  let hidden = params.causal != 0u && i32(j) > i32(i) + params.offset;
  return select(s, LOWEST, !live_row || j >= params.S || hidden);
}

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) t: u32,
) {
  // (split, row group, b * kv_heads + kv_head) beyond 65,535 workgroups fold into y: their index is
  // id.x + id.y * num_workgroups.x, splits fastest.
  let index = wid.x + wid.y * grid.x;
  if (index >= params.splits * params.row_groups * params.BKV) {
    return;
  }
  let split = index % params.splits;
  let row0 = (index / params.splits) % params.row_groups * 4u;
  let bkv = index / (params.splits * params.row_groups); // b * kv_heads + kv_head
  let kv_heads = params.H / params.group;
  let b = bkv / kv_heads;
  let kv_head = bkv % kv_heads;
  let key0 = split * CHUNK;

  // Stage the 4 rows of q (a row past the group repeats the last one; its scores are dead).
  {
    let r = min(row0 + t / QUADS, params.rows - 1u);
    let quad = min(t % QUADS, params.dq - 1u);
    let h = head_of(kv_head, r);
    q_rows[t] = q[(b * params.H * params.L + h * params.q_head + (r % params.L) * params.q_step) * params.dq + quad];
  }
  workgroupBarrier();

  // ---- 1. scores of key key0 + t for the 4 rows
  let j = key0 + t;
  let kv_base = b * kv_heads * params.S + kv_head * params.kv_head; // key 0 of this KV head's K and V
  let k_row = (kv_base + min(j, params.S - 1u) * params.kv_step) * params.dq;
  var s = vec4f(0.0);
  var d = 0u;
  for (; d + 8u <= params.dq; d += 8u) {
    let k0 = k[k_row + d];
    let k1 = k[k_row + d + 1u];
    let k2 = k[k_row + d + 2u];
    let k3 = k[k_row + d + 3u];
    let k4 = k[k_row + d + 4u];
    let k5 = k[k_row + d + 5u];
    let k6 = k[k_row + d + 6u];
    let k7 = k[k_row + d + 7u];
    s += dots(d, k0) + dots(d + 1u, k1) + dots(d + 2u, k2) + dots(d + 3u, k3);
    s += dots(d + 4u, k4) + dots(d + 5u, k5) + dots(d + 6u, k6) + dots(d + 7u, k7);
  }
  for (; d < params.dq; d++) {
    s += dots(d, k[k_row + d]);
  }
  let scores = vec4f(finish(s.x, b, kv_head, row0, j), finish(s.y, b, kv_head, row0 + 1u, j),
                     finish(s.z, b, kv_head, row0 + 2u, j), finish(s.w, b, kv_head, row0 + 3u, j));
  probs[t] = scores;
  workgroupBarrier();

  // ---- 2. each row's max over the chunk, then probabilities in place
  if (t < CHUNK / 8u) {
    var m = probs[8u * t];
    for (var e = 1u; e < 8u; e++) {
      m = max(m, probs[8u * t + e]);
    }
    partial_max[t] = m;
  }
  workgroupBarrier();
  if (t == 0u) {
    var m = vec4f(LOWEST);
    for (var e = 0u; e < CHUNK / 8u; e++) {
      m = max(m, partial_max[e]);
    }
    row_max = m;
  }
  workgroupBarrier();
  let m = row_max;
  probs[t] = select(vec4f(0.0), exp(scores - m), live4(scores));
  workgroupBarrier();

  // ---- 3. sum_j p_j v_j for quad `quad` of the 4 rows, over keys lane, lane + LANES, ...
  let quad = t % QUADS;
  let lane = t / QUADS;
  let v_quad = min(quad, params.dvq - 1u);
  let keys = min(CHUNK, params.S - min(key0, params.S)); // live keys of the chunk are below this
  // Under causal, key key0 + e is seen by row i iff e <= last[r] = i + offset - key0 (a row past the group
  // repeats the last row's). The keys every row sees (below all_see) take the plain products; the rest
  // go only to the rows that see them, since a hidden row's p = 0 times a NaN or infinite v is NaN.
  var last = vec4<i32>(i32(keys) - 1);
  var all_see = keys;
  if (params.causal != 0u) {
    let i = min(vec4u(row0) + vec4u(0u, 1u, 2u, 3u), vec4u(params.rows - 1u)) % vec4u(params.L);
    last = vec4<i32>(i) + vec4<i32>(params.offset - i32(key0));
    all_see = u32(clamp(min(min(last.x, last.y), min(last.z, last.w)) + 1, 0, i32(keys)));
  }
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
  var sums = vec4f(0.0);
  var e = lane;
  for (; e + 7u * LANES < all_see; e += 8u * LANES) {
    let p0 = probs[e];
    let p1 = probs[e + LANES];
    let p2 = probs[e + 2u * LANES];
    let p3 = probs[e + 3u * LANES];
    let p4 = probs[e + 4u * LANES];
    let p5 = probs[e + 5u * LANES];
    let p6 = probs[e + 6u * LANES];
    let p7 = probs[e + 7u * LANES];
    let vb = (kv_base + (key0 + e) * params.kv_step) * params.dvq + v_quad;
    let st = LANES * params.kv_step * params.dvq;
    let v0 = v[vb];
    let v1 = v[vb + st];
    let v2 = v[vb + 2u * st];
    let v3 = v[vb + 3u * st];
    let v4 = v[vb + 4u * st];
    let v5 = v[vb + 5u * st];
    let v6 = v[vb + 6u * st];
    let v7 = v[vb + 7u * st];
    acc0 += ((p0.x * v0 + p1.x * v1) + (p2.x * v2 + p3.x * v3)) + ((p4.x * v4 + p5.x * v5) + (p6.x * v6 + p7.x * v7));
    acc1 += ((p0.y * v0 + p1.y * v1) + (p2.y * v2 + p3.y * v3)) + ((p4.y * v4 + p5.y * v5) + (p6.y * v6 + p7.y * v7));
    acc2 += ((p0.z * v0 + p1.z * v1) + (p2.z * v2 + p3.z * v3)) + ((p4.z * v4 + p5.z * v5) + (p6.z * v6 + p7.z * v7));
    acc3 += ((p0.w * v0 + p1.w * v1) + (p2.w * v2 + p3.w * v3)) + ((p4.w * v4 + p5.w * v5) + (p6.w * v6 + p7.w * v7));
    sums += ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7));
  }
  for (; e < all_see; e += LANES) {
    let p0 = probs[e];
    let v0 = v[(kv_base + (key0 + e) * params.kv_step) * params.dvq + v_quad];
    acc0 += p0.x * v0;
    acc1 += p0.y * v0;
    acc2 += p0.z * v0;
    acc3 += p0.w * v0;
    sums += p0;
  }
  for (; e < keys; e += LANES) {
    let p0 = probs[e];
    let v0 = v[(kv_base + (key0 + e) * params.kv_step) * params.dvq + v_quad];
    let seen = vec4<i32>(i32(e)) <= last;
    acc0 = select(acc0, acc0 + p0.x * v0, seen.x);
    acc1 = select(acc1, acc1 + p0.y * v0, seen.y);
    acc2 = select(acc2, acc2 + p0.z * v0, seen.z);
    acc3 = select(acc3, acc3 + p0.w * v0, seen.w);
    sums += p0;
  }

  // Sum the 4 lanes: 2-3 onto 0-1, then 1 onto 0.
  for (var half = LANES / 2u; half > 0u; half /= 2u) {
    if (lane >= half && lane < 2u * half) {
      let at = ((lane - half) * 4u) * QUADS + quad;
      lanes[at] = acc0;
      lanes[at + QUADS] = acc1;
      lanes[at + 2u * QUADS] = acc2;
      lanes[at + 3u * QUADS] = acc3;
      if (quad == 0u) {
        lane_sums[lane - half] = sums;
      }
    }
    workgroupBarrier();
    if (lane < half) {
      let at = (lane * 4u) * QUADS + quad;
      acc0 += lanes[at];
      acc1 += lanes[at + QUADS];
      acc2 += lanes[at + 2u * QUADS];
      acc3 += lanes[at + 3u * QUADS];
      sums += lane_sums[lane];
    }
    workgroupBarrier();
  }

  if (lane == 0u && quad < params.dvq) {
    let stride = params.splits * params.dvq;
    if (row0 < params.rows) {
      part_out[out_row(b, kv_head, row0) * stride + split * params.dvq + quad] = acc0;
    }
    if (row0 + 1u < params.rows) {
      part_out[out_row(b, kv_head, row0 + 1u) * stride + split * params.dvq + quad] = acc1;
    }
    if (row0 + 2u < params.rows) {
      part_out[out_row(b, kv_head, row0 + 2u) * stride + split * params.dvq + quad] = acc2;
    }
    if (row0 + 3u < params.rows) {
      part_out[out_row(b, kv_head, row0 + 3u) * stride + split * params.dvq + quad] = acc3;
    }
  }
  if (t < 4u && row0 + t < params.rows) {
    part_stats[out_row(b, kv_head, row0 + t) * params.splits + split] = vec2f(m[t], sums[t]);
  }
}

// The output row (b, h, i) of the group's row r in the layout: (b * H + h) * L + i heads-first,
// (b * L + i) * H + h token-major.
fn out_row(b: u32, kv_head: u32, r: u32) -> u32 {
  return b * params.H * params.L + head_of(kv_head, r) * params.q_head + (r % params.L) * params.q_step;
}
