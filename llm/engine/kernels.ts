/**
 * The engine's own WGSL kernels: the steps of a Llama forward that are not a weight product (those
 * are ops/matvec and ops/matmul, through `ops.ts`). Each works on every row of a call at once
 * (one row in decode, a chunk of the prompt in prefill) and reads the call's first position from
 * the engine's `state` buffer, which the greedy sampler advances on the GPU, so that a decode step
 * is encoded the same way at every position.
 *
 * `state` is `[pos0, step, 0, 0]` (u32): the position of the call's first row and the number of
 * tokens generated.
 *
 * @module
 */

/** The state buffer's layout, shared by every kernel that reads it. */
const STATE = `struct State { pos0: u32, step: u32, pad0: u32, pad1: u32 }`;

/** Formats of an embedding table: how a row's values are read. */
export type TableFormat = "f32" | "q8" | "q4g128";

/**
 * Embedding gather from one row block of a table (f32, q8 or q4g128 as stored): rows of `ids`
 * whose id falls in `[row0, row0 + blockRows)` get their row of the table, dequantised
 * (`code * scale`); the others are left to the dispatch of their block.
 */
export function embedSource(format: TableFormat): string {
  const read = {
    f32: "table[r * p.hidden + c]",
    q8: "f32(i32(table[r * p.words + c / 4u] << (24u - 8u * (c % 4u))) >> 24u) * scales[r]",
    q4g128: "f32(i32(table[r * p.words + c / 8u] << (28u - 4u * (c % 8u))) >> 28u) * scales[r * p.groups + c / 128u]",
  }[format];
  return `
struct P { rows: u32, hidden: u32, row0: u32, block_rows: u32, words: u32, groups: u32 }
@group(0) @binding(0) var<storage, read> ids: array<u32>;
@group(0) @binding(1) var<storage, read> table: array<${format === "f32" ? "f32" : "u32"}>;
${format === "f32" ? "" : "@group(0) @binding(2) var<storage, read> scales: array<f32>;"}
@group(0) @binding(${format === "f32" ? 2 : 3}) var<storage, read_write> x: array<f32>;
@group(0) @binding(${format === "f32" ? 3 : 4}) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let c = g.x;
  let row = g.y;
  if (c >= p.hidden || row >= p.rows) { return; }
  let id = ids[row];
  if (id < p.row0 || id >= p.row0 + p.block_rows) { return; }
  let r = id - p.row0;
  x[row * p.hidden + c] = ${read};
}`;
}

/**
 * Residual add and RMSNorm, one workgroup per row from `row0`: `x += delta` (when `add` is 1), then
 * `out = x / sqrt(mean(x^2) + eps) * weight` (HF's LlamaRMSNorm), out's rows counted from 0 (so the
 * last row alone can be normalised for the head). Each invocation holds its `ceil(hidden / 256)`
 * elements in registers (a loop of constant length), so the row is read once and its loads are all
 * issued before the first is needed.
 */
export function normSource(hidden: number): string {
  return `
struct P { hidden: u32, add: u32, eps: f32, row0: u32 }
const PER = ${Math.ceil(hidden / 256)}u;
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> delta: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: P;
var<workgroup> red: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let base = (p.row0 + wid.x) * p.hidden;
  var v: array<f32, PER>;
  var ss = 0.0;
  for (var k = 0u; k < PER; k++) {
    let c = li + 256u * k;
    if (c < p.hidden) {
      var e = x[base + c];
      if (p.add != 0u) {
        e += delta[base + c];
        x[base + c] = e;
      }
      v[k] = e;
      ss += e * e;
    }
  }
  red[li] = ss;
  workgroupBarrier();
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (li < s) { red[li] += red[li + s]; }
    workgroupBarrier();
  }
  let inv = inverseSqrt(red[0] / f32(p.hidden) + p.eps);
  for (var k = 0u; k < PER; k++) {
    let c = li + 256u * k;
    if (c < p.hidden) { out[wid.x * p.hidden + c] = v[k] * inv * weight[c]; }
  }
}`;
}

/**
 * RoPE and the KV-cache write, one workgroup per row: the row's fused projection `[q | k | v]`
 * gives the rotated query (adjacent pairs 2i, 2i + 1, cos/sin from the table row of its position)
 * and the rotated key and the value, written into the cache `[kvHeads, maxSeq, headDim]` at the
 * row's position.
 */
export const ROPE_KV = `
${STATE}
struct P { heads: u32, kv_heads: u32, dim: u32, max_seq: u32 }
@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> table: array<vec2f>;
@group(0) @binding(2) var<storage, read_write> q: array<f32>;
@group(0) @binding(3) var<storage, read_write> kc: array<f32>;
@group(0) @binding(4) var<storage, read_write> vc: array<f32>;
@group(0) @binding(5) var<storage, read> state: State;
@group(0) @binding(6) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let row = wid.x;
  let pos = state.pos0 + row;
  let half = p.dim / 2u;
  let src = row * (p.heads + 2u * p.kv_heads) * p.dim;
  for (var i = li; i < p.heads * half; i += 64u) {
    let h = i / half;
    let j = i % half;
    let cs = table[pos * half + j];
    let a = qkv[src + h * p.dim + 2u * j];
    let b = qkv[src + h * p.dim + 2u * j + 1u];
    let dst = row * p.heads * p.dim + h * p.dim + 2u * j;
    q[dst] = a * cs.x - b * cs.y;
    q[dst + 1u] = b * cs.x + a * cs.y;
  }
  let ksrc = src + p.heads * p.dim;
  for (var i = li; i < p.kv_heads * half; i += 64u) {
    let h = i / half;
    let j = i % half;
    let cs = table[pos * half + j];
    let a = qkv[ksrc + h * p.dim + 2u * j];
    let b = qkv[ksrc + h * p.dim + 2u * j + 1u];
    let dst = (h * p.max_seq + pos) * p.dim + 2u * j;
    kc[dst] = a * cs.x - b * cs.y;
    kc[dst + 1u] = b * cs.x + a * cs.y;
  }
  let vsrc = ksrc + p.kv_heads * p.dim;
  for (var i = li; i < p.kv_heads * p.dim; i += 64u) {
    let h = i / p.dim;
    vc[(h * p.max_seq + pos) * p.dim + i % p.dim] = qkv[vsrc + i];
  }
}`;

/** The largest head size the attention kernel holds in workgroup memory. */
export const MAX_HEAD_DIM = 256;

/** The most slices decode attention may be split into (the combine holds each slice's max, sum and weight). */
export const MAX_ATTENTION_SPLITS = 128;

/**
 * Prefill's causal attention over the cache (after `ROPE_KV`), one workgroup per (query head, row).
 * Query head h reads KV head `h / (heads / kvHeads)`; row r attends to positions
 * `0 ..= pos0 + r`. Positions are taken a chunk at a time (`chunk` scores in workgroup memory,
 * 1,024 unless a test asks for fewer) with a running max and sum (online softmax). headDim must be
 * a multiple of 4: K and V rows are read as vec4s.
 * - Scores: four invocations per position, each summing a quarter of the row's vec4s, so a batch of
 *   32 positions is in flight at once; the four partial sums meet in workgroup memory. An
 *   invocation's vec4s of the key are loaded eight at a time (written out: a loop's loads would
 *   wait for each other unless the driver unrolled it).
 * - Values: the invocations are `floor(128 / (headDim / 4))` groups of `headDim / 4`, one vec4 of
 *   channels each; group g sums positions g, g + groups, ... in registers, four positions' loads
 *   at a time, and the groups' sums are added at the end.
 */
export function attentionSource(chunk = 1024): string {
  return `
${STATE}
struct P { heads: u32, kv_heads: u32, dim: u32, max_seq: u32, scale: f32, splits: u32 }
const WG = 128u;
const CHUNK = ${chunk}u;
const BATCH = 32u; // positions scored at once: four invocations each
@group(0) @binding(0) var<storage, read> q: array<vec4f>;
@group(0) @binding(1) var<storage, read> kc: array<vec4f>;
@group(0) @binding(2) var<storage, read> vc: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read> state: State;
@group(0) @binding(5) var<uniform> p: P;
var<workgroup> qs: array<vec4f, ${MAX_HEAD_DIM / 4}>;
var<workgroup> sc: array<f32, CHUNK>;
var<workgroup> red: array<f32, WG>;
var<workgroup> sums: array<vec4f, WG>;

// qs[i] * kc[kb + i], or 0 past the row (whose last vec4 is read again, so that no load needs a guard).
fn key_term(kb: u32, i: u32, d4: u32) -> vec4f {
  let j = min(i, d4 - 1u);
  return select(vec4f(0.0), qs[j] * kc[kb + j], i < d4);
}

fn reduce_max(li: u32, v: f32) -> f32 {
  red[li] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (li < s) { red[li] = max(red[li], red[li + s]); }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

fn reduce_sum(li: u32, v: f32) -> f32 {
  red[li] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (li < s) { red[li] += red[li + s]; }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let h = wid.x;
  let row = wid.y;
  let d4 = p.dim / 4u;
  let kh = h / (p.heads / p.kv_heads);
  let pos = state.pos0 + row;
  let n = pos + 1u;
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
  for (var c0 = 0u; c0 < n; c0 += CHUNK) {
    let cn = min(CHUNK, n - c0);
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
      red[li] = s.x + s.y + s.z + s.w;
      workgroupBarrier();
      if (li < BATCH && b0 + li < cn) {
        sc[b0 + li] = (red[4u * li] + red[4u * li + 1u] + red[4u * li + 2u] + red[4u * li + 3u]) * p.scale;
      }
      workgroupBarrier();
    }
    var local_max = -3.0e38;
    for (var t = li; t < cn; t += WG) { local_max = max(local_max, sc[t]); }
    let m_new = max(m, reduce_max(li, local_max));
    var local_sum = 0.0;
    for (var t = li; t < cn; t += WG) {
      let e = exp(sc[t] - m_new);
      sc[t] = e;
      local_sum += e;
    }
    let alpha = exp(m - m_new);
    l = l * alpha + reduce_sum(li, local_sum);
    m = m_new;
    acc *= alpha;
    if (g < groups) {
      let vb = kh * p.max_seq + c0;
      var t = g;
      for (; t + 3u * groups < cn; t += 4u * groups) {
        acc += (sc[t] * vc[(vb + t) * d4 + c4] + sc[t + groups] * vc[(vb + t + groups) * d4 + c4]) +
          (sc[t + 2u * groups] * vc[(vb + t + 2u * groups) * d4 + c4] + sc[t + 3u * groups] * vc[(vb + t + 3u * groups) * d4 + c4]);
      }
      for (; t < cn; t += groups) { acc += sc[t] * vc[(vb + t) * d4 + c4]; }
    }
    workgroupBarrier();
  }
  sums[li] = acc;
  workgroupBarrier();
  var total = vec4f(0.0);
  if (li < d4) {
    for (var k = 0u; k < groups; k++) { total += sums[k * d4 + li]; }
  }
  if (li < d4) {
    let o = total / l;
    for (var j = 0u; j < 4u; j++) { out[qbase + 4u * li + j] = o[j]; }
  }
}`;
}

/** Invocations of a decode attention workgroup. */
const DECODE_WG = 128;

/** Workgroup memory of {@link decodeAttentionSource}, in bytes, for `heads` query heads of `headDim`. */
function decodeAttentionBytes(headDim: number, heads: number): number {
  const d4 = headDim / 4;
  // qs, kn and vn; scores; dot partials; value sums; the combine's slices and weights.
  return 16 * (heads + 2) * d4 + 4 * heads * 32 + 4 * heads * DECODE_WG + 16 * heads * DECODE_WG +
    12 * heads * MAX_ATTENTION_SPLITS + 4;
}

/**
 * Query heads a decode attention workgroup serves: the largest divisor of the group size
 * (`heads / kvHeads`) up to 4 whose workgroup memory fits in `limitBytes`, so that a KV row loaded
 * once serves every query head that reads it.
 */
export function decodeHeadsPerWorkgroup(group: number, headDim: number, limitBytes: number): number {
  for (let n = Math.min(4, group); n > 1; n--) {
    if (group % n === 0 && decodeAttentionBytes(headDim, n) <= limitBytes) return n;
  }
  return 1;
}

/**
 * Decode attention (one row, at position `pos = state.pos0`), one workgroup of 128 per (`heads`
 * query heads of one KV head, slice of the cache): RoPE of the queries and of the KV head's new key
 * from the fused projection `[q | k | v]`, the new key and value used from workgroup memory at `pos`
 * and written into the cache by the first slice's first workgroup of each KV head (so a decode layer
 * has no RoPE dispatch), then causal attention over positions `0 ..= pos`. headDim must be a
 * multiple of 4 (K and V rows are read as vec4s), at most ${"`MAX_HEAD_DIM`"}.
 *
 * - Slices: of the `splits` slices the grid has, the first `min(splits, ceil((pos + 1) / batch))`
 *   take the positions in equal runs (the others return at once), so at up to `32 * splits`
 *   positions every slice is one batch.
 * - A batch (`batch` positions, 32 unless a test asks for fewer): each invocation loads its part of
 *   the batch's K rows (four invocations a position, a quarter of the row's vec4s each) and of its
 *   V rows (`floor(128 / (headDim / 4))` groups of `headDim / 4`, one vec4 of channels each, group g
 *   taking positions g, g + groups, ...) into registers before anything waits for them: the first
 *   batch's loads go out with the RoPE's, the next batch's before the barrier that ends a batch.
 *   Each invocation dots its K part with every query head; the four parts meet in workgroup memory.
 *   Every invocation reads the batch's scores from workgroup memory for its head's max and sum
 *   (online softmax across batches: no tree reductions) and adds its V vec4s weighted by them.
 * - With one slice taking part the result is final. With several, each workgroup writes its heads'
 *   unnormalised output, max and sum to `partial` (through atomics), and the last workgroup of a
 *   head group to finish (an atomic counter) combines the slices (flash-decoding: the slices' maxes
 *   and sums loaded at once, one invocation each, then each output channel's slices 16 loads at
 *   a time, through atomic loads so that the combine reads the device's coherent copy) and resets
 *   the counter. An empty slice contributes max -3e38 and sum 0, which the combine weighs as 0.
 */
export function decodeAttentionSource(headDim: number, heads: number, batch = 32): string {
  if (headDim % 4 !== 0 || headDim > MAX_HEAD_DIM) {
    throw new Error(`decodeAttentionSource: headDim must be a multiple of 4 up to ${MAX_HEAD_DIM}, got ${headDim}`);
  }
  if (!Number.isInteger(batch) || batch < 1 || batch > 32) {
    throw new Error(`decodeAttentionSource: batch must be an integer in [1, 32], got ${batch}`);
  }
  const d4 = headDim / 4;
  const kPer = Math.ceil(d4 / 4); // K vec4s an invocation holds
  const groups = Math.floor(DECODE_WG / d4);
  const vPer = Math.ceil(batch / groups); // V vec4s an invocation holds
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  const items = Math.ceil((heads * headDim) / DECODE_WG); // outputs of the combine per invocation
  const hs = range(heads);
  // The registers of a batch starting at c0: positions past the last (`pos`) read `pos`'s row instead.
  const load = [
    ...range(kPer).map((k) => `kr${k} = kc[krow + min(quarter + ${4 * k}u, D4 - 1u)];`),
    ...range(vPer).map((k) => `vr${k} = vc[(vrow0 + min(c0 + g + ${k * groups}u, pos)) * D4 + c4];`),
  ].map((l) => `    ${l}`).join("\n").replace(/krow/g, "(krow0 + min(c0 + t, pos)) * D4");
  const dot = (h: number) =>
    range(kPer).map((k) => {
      const full = 4 * (k + 1) <= d4; // every quarter's vec4 is in the row
      const i = full ? `quarter + ${4 * k}u` : `min(quarter + ${4 * k}u, D4 - 1u)`;
      const term = `dot(qs[${h}u * D4 + ${i}], select(kr${k}, kn[${i}], newest))`;
      return full ? term : `select(0.0, ${term}, quarter + ${4 * k}u < D4)`;
    }).join(" + ");
  const weighted = (h: number) =>
    range(vPer).map((k) => {
      const t = `g + ${k * groups}u`;
      return `select(0.0, exp(sc[${h}u * BATCH + min(${t}, BATCH - 1u)] - m_new), ${t} < cn) * select(vr${k}, vn[c4], c0 + ${t} == pos)`;
    }).join(" +\n        ");
  return `
${STATE}
struct P { heads: u32, kv_heads: u32, dim: u32, max_seq: u32, scale: f32, splits: u32 }
const WG = ${DECODE_WG}u;
const D4 = ${d4}u;
const HEADS = ${heads}u; // query heads of the workgroup
const BATCH = ${batch}u;
const GROUPS = ${groups}u; // position groups of the value sums
const SPLITS = ${MAX_ATTENTION_SPLITS}u;
@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> table: array<vec2f>;
@group(0) @binding(2) var<storage, read_write> kc: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> vc: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read> state: State;
@group(0) @binding(6) var<storage, read_write> partial: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(8) var<uniform> p: P;
var<workgroup> qs: array<vec4f, ${heads * d4}>;
var<workgroup> kn: array<vec4f, D4>;
var<workgroup> vn: array<vec4f, D4>;
var<workgroup> sc: array<f32, ${heads * batch}>;
var<workgroup> red: array<f32, ${heads * DECODE_WG}>;
var<workgroup> sums: array<vec4f, ${heads * DECODE_WG}>;
var<workgroup> slices: array<vec2f, ${heads * MAX_ATTENTION_SPLITS}>; // the combine's (max, sum) of each slice
var<workgroup> weights: array<f32, ${heads * MAX_ATTENTION_SPLITS}>; // and its weight
var<workgroup> last: u32;

// Partial results go through atomics so that the combining workgroup reads them from the device's
// coherent level, not from a cache line another step left behind.
fn load_partial(i: u32) -> f32 {
  return bitcast<f32>(atomicLoad(&partial[i]));
}

@compute @workgroup_size(${DECODE_WG})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let h0 = wid.x * HEADS; // the workgroup's first query head
  let split = wid.z;
  let per_kv = p.heads / p.kv_heads;
  let kh = h0 / per_kv;
  let pos = state.pos0;
  let n = pos + 1u;
  let used = min(p.splits, (n + BATCH - 1u) / BATCH);
  if (split >= used) { return; }
  let per = (n + used - 1u) / used;
  let begin = min(split * per, n);
  let end = min(begin + per, n);
  let t = li / 4u; // the position of the batch whose K part this invocation holds
  let quarter = li % 4u;
  let g = li / D4; // the position group of this invocation's V vec4s
  let c4 = li % D4;
  let krow0 = kh * p.max_seq;
  let vrow0 = kh * p.max_seq;
  var c0 = begin;
${range(kPer).map((k) => `  var kr${k}: vec4f;`).join("\n")}
${range(vPer).map((k) => `  var vr${k}: vec4f;`).join("\n")}
${load}
  let half = ${headDim / 2}u;
  let ksrc = p.heads * ${headDim}u + kh * ${headDim}u;
  let vsrc = (p.heads + p.kv_heads) * ${headDim}u + kh * ${headDim}u;
  for (var j = li; j < half; j += WG) {
    let cs = table[pos * half + j];
    let e = 2u * (j % 2u);
${
    hs.map((h) =>
      `    let a${h} = qkv[(h0 + ${h}u) * ${headDim}u + 2u * j];
    let b${h} = qkv[(h0 + ${h}u) * ${headDim}u + 2u * j + 1u];
    qs[${h}u * D4 + j / 2u][e] = a${h} * cs.x - b${h} * cs.y;
    qs[${h}u * D4 + j / 2u][e + 1u] = b${h} * cs.x + a${h} * cs.y;`
    ).join("\n")
  }
    let ka = qkv[ksrc + 2u * j];
    let kb = qkv[ksrc + 2u * j + 1u];
    kn[j / 2u][e] = ka * cs.x - kb * cs.y;
    kn[j / 2u][e + 1u] = kb * cs.x + ka * cs.y;
  }
  for (var i = li; i < D4; i += WG) {
    vn[i] = vec4f(qkv[vsrc + 4u * i], qkv[vsrc + 4u * i + 1u], qkv[vsrc + 4u * i + 2u], qkv[vsrc + 4u * i + 3u]);
  }
  workgroupBarrier();
  if (split == 0u && h0 % per_kv == 0u) {
    let at = (kh * p.max_seq + pos) * D4;
    for (var i = li; i < D4; i += WG) {
      kc[at + i] = kn[i];
      vc[at + i] = vn[i];
    }
  }
  var m: array<f32, HEADS>;
  var l: array<f32, HEADS>;
  var acc: array<vec4f, HEADS>;
${hs.map((h) => `  m[${h}] = -3.0e38;\n  l[${h}] = 0.0;\n  acc[${h}] = vec4f(0.0);`).join("\n")}
  loop {
    if (c0 >= end) { break; }
    let cn = min(BATCH, end - c0);
    let newest = c0 + t == pos;
${hs.map((h) => `    red[${h}u * WG + li] = ${dot(h)};`).join("\n")}
    workgroupBarrier();
    if (li < HEADS * BATCH) {
      let b = li % BATCH;
      let r = (li / BATCH) * WG + 4u * b;
      sc[li] = select(-3.0e38, (red[r] + red[r + 1u] + red[r + 2u] + red[r + 3u]) * p.scale, b < cn);
    }
    workgroupBarrier();
${
    hs.map((h) =>
      `    {
      var bm = -3.0e38;
      for (var b = 0u; b < BATCH; b++) { bm = max(bm, sc[${h}u * BATCH + b]); }
      let m_new = max(m[${h}], bm);
      var bl = 0.0;
      for (var b = 0u; b < BATCH; b++) { bl += exp(sc[${h}u * BATCH + b] - m_new); }
      let alpha = exp(m[${h}] - m_new);
      m[${h}] = m_new;
      l[${h}] = l[${h}] * alpha + bl;
      acc[${h}] *= alpha;
      if (g < GROUPS) {
        acc[${h}] += ${weighted(h)};
      }
    }`
    ).join("\n")
  }
    c0 += BATCH;
    if (c0 < end) {
${load.replace(/^ {4}/gm, "      ")}
    }
    workgroupBarrier();
  }
${hs.map((h) => `  sums[${h}u * WG + li] = select(vec4f(0.0), acc[${h}], g < GROUPS);`).join("\n")}
  workgroupBarrier();
  // Each (head, channel vec4) of the workgroup: the groups' sums.
  var totals: array<vec4f, ${Math.ceil((heads * d4) / DECODE_WG)}>;
  for (var k = 0u; k < ${Math.ceil((heads * d4) / DECODE_WG)}u; k++) {
    let i = li + k * WG;
    var total = vec4f(0.0);
    if (i < HEADS * D4) {
      let base = (i / D4) * WG + i % D4;
      for (var q = 0u; q < GROUPS; q++) { total += sums[base + q * D4]; }
    }
    totals[k] = total;
  }
  if (used == 1u) {
    for (var k = 0u; k < ${Math.ceil((heads * d4) / DECODE_WG)}u; k++) {
      let i = li + k * WG;
      if (i < HEADS * D4) {
        let o = totals[k] / l[i / D4];
        let at = (h0 + i / D4) * ${headDim}u + 4u * (i % D4);
        for (var j = 0u; j < 4u; j++) { out[at + j] = o[j]; }
      }
    }
    return;
  }
  // Flash-decoding: each head's (m, l, acc) of this slice to partial[(head, split)], then the last to finish combines.
  let stride = ${headDim + 2}u;
  for (var k = 0u; k < ${Math.ceil((heads * d4) / DECODE_WG)}u; k++) {
    let i = li + k * WG;
    if (i < HEADS * D4) {
      let at = ((h0 + i / D4) * p.splits + split) * stride + 2u + 4u * (i % D4);
      for (var j = 0u; j < 4u; j++) { atomicStore(&partial[at + j], bitcast<u32>(totals[k][j])); }
    }
  }
  if (li < HEADS) {
    let at = ((h0 + li) * p.splits + split) * stride;
    atomicStore(&partial[at], bitcast<u32>(m[min(li, HEADS - 1u)]));
    atomicStore(&partial[at + 1u], bitcast<u32>(l[min(li, HEADS - 1u)]));
  }
  storageBarrier();
  workgroupBarrier();
  if (li == 0u) {
    last = u32(atomicAdd(&counters[wid.x], 1u) == used - 1u);
  }
  if (workgroupUniformLoad(&last) == 0u) { return; }
  storageBarrier();
  for (var i = li; i < HEADS * used; i += WG) {
    let at = ((h0 + i / used) * p.splits + i % used) * stride;
    slices[(i / used) * SPLITS + i % used] = vec2f(load_partial(at), load_partial(at + 1u));
  }
  workgroupBarrier();
  // Each slice's weight, 0 past the last slice (so that the loads below go 16 slices at a time).
  for (var i = li; i < HEADS * SPLITS; i += WG) {
    let s = i % SPLITS;
    var w = 0.0;
    if (s < used) {
      let base = i - s;
      var gm = -3.0e38;
      for (var r = 0u; r < used; r++) { gm = max(gm, slices[base + r].x); }
      var gl = 0.0;
      for (var r = 0u; r < used; r++) { gl += slices[base + r].y * exp(slices[base + r].x - gm); }
      w = exp(slices[i].x - gm) / gl;
    }
    weights[i] = w;
  }
  workgroupBarrier();
  // Each output (head, channel) of the workgroup: its slices' sum, weighted, 16 slices' loads at a time.
${
    range(items).map((k) =>
      `  let i${k} = min(li + ${k * DECODE_WG}u, HEADS * ${headDim}u - 1u);
  let at${k} = (h0 + i${k} / ${headDim}u) * p.splits * stride + 2u + i${k} % ${headDim}u;
  let w${k} = (i${k} / ${headDim}u) * SPLITS;
  var a${k} = 0.0;`
    ).join("\n")
  }
  for (var s = 0u; s < used; s += 16u) {
${
    range(items).map((k) => {
      const terms = range(16).map((j) =>
        `load_partial(at${k} + min(s + ${j}u, used - 1u) * stride) * weights[w${k} + s + ${j}u]`
      );
      const tree = (t: string[]): string =>
        t.length === 1 ? t[0] : `(${tree(t.slice(0, t.length / 2))} + ${tree(t.slice(t.length / 2))})`;
      return `    a${k} += ${tree(terms)};`;
    }).join("\n")
  }
  }
${
    range(items).map((k) =>
      `  if (li + ${k * DECODE_WG}u < HEADS * ${headDim}u) { out[h0 * ${headDim}u + i${k}] = a${k}; }`
    ).join("\n")
  }
  if (li == 0u) { atomicStore(&counters[wid.x], 0u); }
}`;
}

/**
 * `h = silu(gate) * up` from a piece of each row's fused gate/up projection: `gu` `[rows, 2 * pairs]`,
 * whose columns alternate (gate j at 2j, up j at 2j + 1: resident.ts interleaves the weight's rows),
 * into columns `[col0, col0 + pairs)` of `h` `[rows, ffn]`.
 */
export const SILU_MUL = `
struct P { rows: u32, pairs: u32, ffn: u32, col0: u32 }
@group(0) @binding(0) var<storage, read> gu: array<f32>;
@group(0) @binding(1) var<storage, read_write> h: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let j = g.x;
  let row = g.y;
  if (j >= p.pairs || row >= p.rows) { return; }
  let gate = gu[row * 2u * p.pairs + 2u * j];
  h[row * p.ffn + p.col0 + j] = gate / (1.0 + exp(-gate)) * gu[row * 2u * p.pairs + 2u * j + 1u];
}`;

/**
 * Places a block of columns `[M, blockN]` into `c` `[M, N]` at column `n0`: the output of one row
 * block of a weight split across bindings.
 */
export const PLACE_BLOCK = `
struct P { m: u32, block_n: u32, n: u32, n0: u32 }
@group(0) @binding(0) var<storage, read> blk: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let j = g.x;
  let m = g.y;
  if (j >= p.block_n || m >= p.m) { return; }
  c[m * p.n + p.n0 + j] = blk[m * p.block_n + j];
}`;

/** `out[c, r] = in[r, c]` for `in` `[rows, cols]`, through 16 x 16 tiles of workgroup memory. */
export const TRANSPOSE = `
struct P { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
var<workgroup> tile: array<f32, 272>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let r = wid.y * 16u + lid.y;
  let c = wid.x * 16u + lid.x;
  if (r < p.rows && c < p.cols) { tile[lid.y * 17u + lid.x] = src[r * p.cols + c]; }
  workgroupBarrier();
  let tr = wid.y * 16u + lid.x;
  let tc = wid.x * 16u + lid.y;
  if (tr < p.rows && tc < p.cols) { dst[tc * p.rows + tr] = tile[lid.x * 17u + lid.y]; }
}`;

/**
 * Places a transposed block `ct` `[blockN, M]` into `c` `[M, N]` at column `n0`: the output of the
 * transposed f32 prefill product, through 16 x 16 tiles of workgroup memory.
 */
export const TRANSPOSE_PLACE = `
struct P { m: u32, block_n: u32, n: u32, n0: u32 }
@group(0) @binding(0) var<storage, read> ct: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
var<workgroup> tile: array<f32, 272>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let j = wid.y * 16u + lid.y;
  let m = wid.x * 16u + lid.x;
  if (j < p.block_n && m < p.m) { tile[lid.y * 17u + lid.x] = ct[j * p.m + m]; }
  workgroupBarrier();
  let tm = wid.x * 16u + lid.y;
  let tj = wid.y * 16u + lid.x;
  if (tj < p.block_n && tm < p.m) { c[tm * p.n + p.n0 + tj] = tile[lid.x * 17u + lid.y]; }
}`;

/** Logits each workgroup of the greedy sampler scans. */
export const ARGMAX_SLICE = 4096;

/**
 * Greedy sampling on the GPU: the first index of the largest logit (NaN never wins), written where
 * the next step's embedding gather reads it (`ids[0]`) and into `tokens[step]`; the step advances by
 * one and the position by the rows of the call (the next call's first row follows them).
 *
 * Each workgroup finds the best of a slice of ${"`ARGMAX_SLICE`"} logits and stores it (through
 * atomics, so the combining workgroup reads the device's coherent copy); the last workgroup to
 * finish (an atomic counter) picks the best of the slices, the lower index on a tie, and resets the
 * counter.
 */
export const ARGMAX = `
${STATE}
struct P { vocab: u32, advance: u32 }
const SLICE = ${ARGMAX_SLICE}u;
@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> ids: array<u32>;
@group(0) @binding(2) var<storage, read_write> tokens: array<u32>;
@group(0) @binding(3) var<storage, read_write> state: State;
@group(0) @binding(4) var<storage, read_write> partial: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> counter: array<atomic<u32>>;
@group(0) @binding(6) var<uniform> p: P;
var<workgroup> best_v: array<f32, 256>;
var<workgroup> best_i: array<u32, 256>;
var<workgroup> last: u32;

// The better of (v, i) and the pair at slot li + s: larger value, else lower index.
fn keep_better(li: u32, s: u32) {
  let ov = best_v[li + s];
  let oi = best_i[li + s];
  if (ov > best_v[li] || (ov == best_v[li] && oi < best_i[li])) {
    best_v[li] = ov;
    best_i[li] = oi;
  }
}

fn reduce(li: u32) {
  workgroupBarrier();
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (li < s) { keep_better(li, s); }
    workgroupBarrier();
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) li: u32) {
  var bv = -0x1.fffffep+127f;
  var bi = 0xffffffffu;
  let end = min(p.vocab, (wid.x + 1u) * SLICE);
  for (var i = wid.x * SLICE + li; i < end; i += 256u) {
    let v = logits[i];
    if (v > bv || (bi == 0xffffffffu && v == bv)) {
      bv = v;
      bi = i;
    }
  }
  best_v[li] = bv;
  best_i[li] = bi;
  reduce(li);
  if (li == 0u) {
    atomicStore(&partial[2u * wid.x], bitcast<u32>(best_v[0]));
    atomicStore(&partial[2u * wid.x + 1u], best_i[0]);
  }
  storageBarrier();
  workgroupBarrier();
  if (li == 0u) { last = u32(atomicAdd(&counter[0], 1u) == nwg.x - 1u); }
  if (workgroupUniformLoad(&last) == 0u) { return; }
  storageBarrier();
  best_v[li] = -0x1.fffffep+127f;
  best_i[li] = 0xffffffffu;
  for (var w = li; w < nwg.x; w += 256u) {
    let v = bitcast<f32>(atomicLoad(&partial[2u * w]));
    let i = atomicLoad(&partial[2u * w + 1u]);
    if (v > best_v[li] || (v == best_v[li] && i < best_i[li])) {
      best_v[li] = v;
      best_i[li] = i;
    }
  }
  reduce(li);
  if (li == 0u) {
    let id = min(best_i[0], p.vocab - 1u);
    ids[0] = id;
    tokens[state.step] = id;
    state.step += 1u;
    state.pos0 += p.advance;
    atomicStore(&counter[0], 0u);
  }
}`;

/**
 * A constraint's mask applied to one row of logits: ids whose bit in `mask` (bit `i % 32` of word
 * `i / 32`) is clear get logit -Infinity, which the greedy and the seeded sampler never choose.
 * -Infinity comes in the params (`minus_inf`): WGSL has no literal for it, and Tint (Chrome's
 * compiler) refuses a shader that makes one from constants (`bitcast<f32>(0xff800000u)`).
 */
export const MASK_LOGITS = `
struct P { vocab: u32, minus_inf: f32 }
@group(0) @binding(0) var<storage, read_write> logits: array<f32>;
@group(0) @binding(1) var<storage, read> mask: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x;
  if (i >= p.vocab) { return; }
  if (((mask[i / 32u] >> (i % 32u)) & 1u) == 0u) { logits[i] = p.minus_inf; }
}`;
