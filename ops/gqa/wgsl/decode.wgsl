// gqa/decode: the first pass of flash-decoding. Each workgroup takes one KV head of one batch, a split of
// `blocks` consecutive blocks of KEYS = 64 keys, and up to 4 query rows of that KV head's group (row
// r = g * L + i: query head h = kv_head * group + g, query row i); it reads each K and V row of its split
// once for all of them and writes per row the split's unnormalised output sum_j exp(s_j - m) v_j with its
// max m and its sum l = sum_j exp(s_j - m) (online softmax across the blocks). gqa/combine merges the
// splits. Decode attention is bandwidth-bound: the cache must be read once per KV head, not once per
// query head, with enough bytes in flight to keep the memory system busy.
// q [B, H, L, D], k [B, kv_heads, S, D], v [B, kv_heads, S, Dv], D and Dv multiples of 4 and at most
// 128 (rows are vec4s: 32 quads); part_out [B * H * L, splits, Dv], part_stats [B * H * L, splits, 2].
//
// Per block, every invocation first issues all its loads of the block, 8 quads of K and 8 of V, so that
// 16 loads of 16 bytes are in flight per invocation and V arrives while the scores are computed (a
// first version read K, then after the softmax V, four loads at a time: 0.032 ms at S = 8,192 on the
// H200, 46% of the read probe). K is read 4 invocations per key, invocation (key t / 4, sub t % 4)
// taking quads sub, sub + 4, ..., so that 4 neighbours read 64 contiguous bytes; V 32 invocations per
// row (quad t % 32, lane t / 32 taking keys lane, lane + 8, ...), 512 contiguous bytes.
// 1. scores: each invocation's partial dot products with the 4 rows of q staged in workgroup memory
//    (zeros past D), summed over the key's 4 invocations; a dead score (key past S, hidden by causal,
//    a row past the group) is LOWEST; any score <= LOWEST (a mask of -inf included) counts as masked.
// 2. the block's max per row (8 partial maxima of 8 keys), the running max, exp(s - max) in place, and
//    the rescaling exp(old max - new max) of what the earlier blocks added.
// 3. output: each invocation adds p_j * v_j over its 8 keys for the 4 rows, and the row sums l
//    alongside; after the last block the 8 lanes are summed through workgroup memory in three halvings.

struct Params {
  L: u32,
  S: u32,
  H: u32,
  group: u32,     // query heads per KV head
  rows: u32,      // group * L: rows of one KV head
  dq: u32,        // D / 4
  dvq: u32,       // Dv / 4
  splits: u32,    // ceil(S / (KEYS * blocks))
  scale: f32,
  causal: u32,
  offset: i32,    // key j is visible to row i under causal iff j <= i + offset
  masked: u32,    // 1 when `mask` holds an additive mask
  mask_b: u32,    // strides of the mask over b, h, i (0 where it broadcasts); 1 over j
  mask_h: u32,
  mask_i: u32,
  row_groups: u32, // ceil(rows / 4)
  BKV: u32,        // B * kv_heads
  blocks: u32,     // blocks of KEYS keys per split
}

@group(0) @binding(0) var<storage, read> q: array<vec4f>;
@group(0) @binding(1) var<storage, read> k: array<vec4f>;
@group(0) @binding(2) var<storage, read> v: array<vec4f>;
@group(0) @binding(3) var<storage, read> mask: array<f32>;
@group(0) @binding(4) var<storage, read_write> part_out: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> part_stats: array<vec2f>;
@group(0) @binding(6) var<uniform> params: Params;

const THREADS = 256u;
const KEYS = 64u;    // keys per block: THREADS / 4 (4 invocations per K row)
const QUADS = 32u;   // most quads of a q, k or v row (D, Dv <= 128)
const LANES = 8u;    // THREADS / QUADS: invocations sharing a quad of the output, 8 keys each
const LOWEST = -0x1.fffffep+127f;

var<workgroup> q_rows: array<vec4f, 128>;     // 4 rows x QUADS, zeros past dq
var<workgroup> exchange: array<vec4f, 512>;   // per invocation a partial dot; then (LANES / 2) x 4 rows x QUADS
var<workgroup> probs: array<vec4f, KEYS>;     // per key, the 4 rows' scores, then probabilities
var<workgroup> block_max: array<vec4f, 8>;    // per 8 keys, the 4 rows' maxima
var<workgroup> lane_sums: array<vec4f, 4>;    // LANES / 2

// The query head of the group's row r (r < rows).
fn head_of(kv_head: u32, r: u32) -> u32 {
  return kv_head * params.group + r / params.L;
}

// The 4 staged rows' dot products with quad d of a K row (zeros where d >= dq).
fn dots(d: u32, kq: vec4f) -> vec4f {
  let live = select(vec4f(0.0), kq, d < params.dq);
  return vec4f(dot(q_rows[d], live), dot(q_rows[QUADS + d], live), dot(q_rows[2u * QUADS + d], live),
               dot(q_rows[3u * QUADS + d], live));
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

// Quad d of V row j of this head, zeros past S (its probability is 0; a finite row is not assumed).
fn v_quad(kv_base: u32, j: u32, d: u32) -> vec4f {
  let x = v[(kv_base + min(j, params.S - 1u)) * params.dvq + d];
  return select(vec4f(0.0), x, j < params.S);
}

@compute @workgroup_size(256)
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
  let kv_base = bkv * params.S; // this head's key 0
  let last_dq = params.dq - 1u;

  let kk = t / 4u;   // K: key of the block
  let sub = t % 4u;  // K: quads sub, sub + 4, ..., sub + 28
  let quad = t % QUADS; // V and output: quad
  let lane = t / QUADS; // V: keys lane, lane + LANES, ..., lane + 7 * LANES
  let vq = min(quad, params.dvq - 1u);

  var m_run = vec4f(LOWEST);
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
  var sums = vec4f(0.0);
  for (var block = 0u; block < params.blocks; block++) {
    let key0 = (split * params.blocks + block) * KEYS;
    if (key0 >= params.S) {
      break;
    }
    // Every load of the block, before any of them is used.
    let k_row = (kv_base + min(key0 + kk, params.S - 1u)) * params.dq;
    let k0 = k[k_row + min(sub, last_dq)];
    let k1 = k[k_row + min(sub + 4u, last_dq)];
    let k2 = k[k_row + min(sub + 8u, last_dq)];
    let k3 = k[k_row + min(sub + 12u, last_dq)];
    let k4 = k[k_row + min(sub + 16u, last_dq)];
    let k5 = k[k_row + min(sub + 20u, last_dq)];
    let k6 = k[k_row + min(sub + 24u, last_dq)];
    let k7 = k[k_row + min(sub + 28u, last_dq)];
    let v0 = v_quad(kv_base, key0 + lane, vq);
    let v1 = v_quad(kv_base, key0 + lane + LANES, vq);
    let v2 = v_quad(kv_base, key0 + lane + 2u * LANES, vq);
    let v3 = v_quad(kv_base, key0 + lane + 3u * LANES, vq);
    let v4 = v_quad(kv_base, key0 + lane + 4u * LANES, vq);
    let v5 = v_quad(kv_base, key0 + lane + 5u * LANES, vq);
    let v6 = v_quad(kv_base, key0 + lane + 6u * LANES, vq);
    let v7 = v_quad(kv_base, key0 + lane + 7u * LANES, vq);
    if (block == 0u && t < 128u) {
      // Stage the 4 rows of q (a row past the group repeats the last one; its scores are dead).
      let r = min(row0 + t / QUADS, params.rows - 1u);
      let x = q[((b * params.H + head_of(kv_head, r)) * params.L + r % params.L) * params.dq + min(quad, last_dq)];
      q_rows[t] = select(vec4f(0.0), x, quad < params.dq);
    }
    workgroupBarrier();

    // ---- 1. scores of key key0 + kk: this invocation's 8 quads, then the key's 4 invocations summed
    exchange[t] = (dots(sub, k0) + dots(sub + 4u, k1)) + (dots(sub + 8u, k2) + dots(sub + 12u, k3)) +
      ((dots(sub + 16u, k4) + dots(sub + 20u, k5)) + (dots(sub + 24u, k6) + dots(sub + 28u, k7)));
    workgroupBarrier();
    var scores = vec4f(LOWEST);
    if (t < KEYS) {
      let d = (exchange[4u * t] + exchange[4u * t + 1u]) + (exchange[4u * t + 2u] + exchange[4u * t + 3u]);
      let j = key0 + t;
      scores = vec4f(finish(d.x, b, kv_head, row0, j), finish(d.y, b, kv_head, row0 + 1u, j),
                     finish(d.z, b, kv_head, row0 + 2u, j), finish(d.w, b, kv_head, row0 + 3u, j));
      probs[t] = scores;
    }
    workgroupBarrier();

    // ---- 2. the block's max, the running max, probabilities in place
    if (t < KEYS / 8u) {
      var m = probs[8u * t];
      for (var e = 1u; e < 8u; e++) {
        m = max(m, probs[8u * t + e]);
      }
      block_max[t] = m;
    }
    workgroupBarrier();
    var m_new = m_run;
    for (var e = 0u; e < KEYS / 8u; e++) {
      m_new = max(m_new, block_max[e]);
    }
    let alpha = exp(m_run - m_new); // 0 while m_run is LOWEST and the block has a live key
    m_run = m_new;
    if (t < KEYS) {
      probs[t] = select(vec4f(0.0), exp(scores - m_new), scores > vec4f(LOWEST));
    }
    workgroupBarrier();

    // ---- 3. sum_j p_j v_j over this invocation's 8 keys, for the 4 rows
    let p0 = probs[lane];
    let p1 = probs[lane + LANES];
    let p2 = probs[lane + 2u * LANES];
    let p3 = probs[lane + 3u * LANES];
    let p4 = probs[lane + 4u * LANES];
    let p5 = probs[lane + 5u * LANES];
    let p6 = probs[lane + 6u * LANES];
    let p7 = probs[lane + 7u * LANES];
    acc0 = acc0 * alpha.x + ((p0.x * v0 + p1.x * v1) + (p2.x * v2 + p3.x * v3)) +
      ((p4.x * v4 + p5.x * v5) + (p6.x * v6 + p7.x * v7));
    acc1 = acc1 * alpha.y + ((p0.y * v0 + p1.y * v1) + (p2.y * v2 + p3.y * v3)) +
      ((p4.y * v4 + p5.y * v5) + (p6.y * v6 + p7.y * v7));
    acc2 = acc2 * alpha.z + ((p0.z * v0 + p1.z * v1) + (p2.z * v2 + p3.z * v3)) +
      ((p4.z * v4 + p5.z * v5) + (p6.z * v6 + p7.z * v7));
    acc3 = acc3 * alpha.w + ((p0.w * v0 + p1.w * v1) + (p2.w * v2 + p3.w * v3)) +
      ((p4.w * v4 + p5.w * v5) + (p6.w * v6 + p7.w * v7));
    sums = sums * alpha + ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7));
  }

  // Sum the 8 lanes: 4-7 onto 0-3, 2-3 onto 0-1, 1 onto 0.
  for (var half = LANES / 2u; half > 0u; half /= 2u) {
    if (lane >= half && lane < 2u * half) {
      let at = ((lane - half) * 4u) * QUADS + quad;
      exchange[at] = acc0;
      exchange[at + QUADS] = acc1;
      exchange[at + 2u * QUADS] = acc2;
      exchange[at + 3u * QUADS] = acc3;
      if (quad == 0u) {
        lane_sums[lane - half] = sums;
      }
    }
    workgroupBarrier();
    if (lane < half) {
      let at = (lane * 4u) * QUADS + quad;
      acc0 += exchange[at];
      acc1 += exchange[at + QUADS];
      acc2 += exchange[at + 2u * QUADS];
      acc3 += exchange[at + 3u * QUADS];
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
    part_stats[out_row(b, kv_head, row0 + t) * params.splits + split] = vec2f(m_run[t], sums[t]);
  }
}

// The output row (b, h, i) of the group's row r: (b * H + h) * L + i.
fn out_row(b: u32, kv_head: u32, r: u32) -> u32 {
  return (b * params.H + head_of(kv_head, r)) * params.L + r % params.L;
}
