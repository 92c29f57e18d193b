// The functions gqa's KV-cache attention kernels (cache_decode, cache_prefill) share: a key's term of a
// score, the workgroup's max and sum, a batch's scores into workgroup memory, the online softmax's step
// over a chunk of scores, and the end of a (query head, row, split) workgroup (`finish`: the output with
// one split; with several, the flash-decoding write of the slice and the combine by the last workgroup
// to finish). Needs the kernel's WG, BATCH, p (heads, dim, scale, splits), out, partial, counters, kc,
// and its workgroup memory qs, sc and red.
var<workgroup> sums: array<vec4f, WG>;
var<workgroup> last: u32;
var<workgroup> slices: array<vec2f, WG>; // the combine's (max, sum) of each slice, then its weight

// qs[i] * kc[kb + i], or 0 past the row (whose last vec4 is read again, so that no load needs a guard).
fn key_term(kb: u32, i: u32, d4: u32) -> vec4f {
  let j = min(i, d4 - 1u);
  return select(vec4f(0.0), qs[j] * kc[kb + j], i < d4);
}

// Partial results go through atomics so that the combining workgroup reads them from the device's
// coherent level, not from a cache line another step left behind.
fn load_partial(i: u32) -> f32 {
  return bitcast<f32>(atomicLoad(&partial[i]));
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

// The scores of a batch: each invocation's partial dot product s (a quarter of position li / 4's) summed
// with the other three's, scaled, into sc[b0 + li / 4] for the positions below cn.
fn store_scores(li: u32, b0: u32, cn: u32, s: vec4f) {
  red[li] = s.x + s.y + s.z + s.w;
  workgroupBarrier();
  if (li < BATCH && b0 + li < cn) {
    sc[b0 + li] = (red[4u * li] + red[4u * li + 1u] + red[4u * li + 2u] + red[4u * li + 3u]) * p.scale;
  }
  workgroupBarrier();
}

// The online softmax's step over a chunk's scores sc[0 .. cn), with m the running max so far: returns
// (m_new, sum), m_new = max(m, the chunk's max), each sc[t] replaced by exp(sc[t] - m_new) and sum their
// sum.
fn chunk_softmax(li: u32, cn: u32, m: f32) -> vec2f {
  var local_max = -3.0e38;
  for (var t = li; t < cn; t += WG) { local_max = max(local_max, sc[t]); }
  let m_new = max(m, reduce_max(li, local_max));
  var local_sum = 0.0;
  for (var t = li; t < cn; t += WG) {
    let e = exp(sc[t] - m_new);
    sc[t] = e;
    local_sum += e;
  }
  return vec2f(m_new, reduce_sum(li, local_sum));
}

// The end of the workgroup of query head h, row `row` and slice `split`, whose invocations hold the
// unnormalised value sums `acc` of their position group (groups of d4 invocations), with the slice's
// running max m and sum l: the groups' sums added, then with one split out[qbase ..] = the total / l;
// with several, the slice's (m, l, total) to partial[(row, h, split)], and the last workgroup of
// (row, h) to finish combines every slice into out[qbase ..] and resets its counter.
fn finish(li: u32, row: u32, h: u32, split: u32, qbase: u32, d4: u32, groups: u32, acc: vec4f, m: f32, l: f32) {
  sums[li] = acc;
  workgroupBarrier();
  var total = vec4f(0.0);
  if (li < d4) {
    for (var k = 0u; k < groups; k++) { total += sums[k * d4 + li]; }
  }
  if (p.splits == 1u) {
    if (li < d4) {
      let o = total / l;
      for (var j = 0u; j < 4u; j++) { out[qbase + 4u * li + j] = o[j]; }
    }
    return;
  }
  // Flash-decoding: this slice's (m, l, acc) to partial[(row, h, split)], then the last to finish combines.
  let stride = p.dim + 2u;
  let slot = ((row * p.heads + h) * p.splits + split) * stride;
  if (li < d4) {
    for (var j = 0u; j < 4u; j++) { atomicStore(&partial[slot + 2u + 4u * li + j], bitcast<u32>(total[j])); }
  }
  if (li == 0u) {
    atomicStore(&partial[slot], bitcast<u32>(m));
    atomicStore(&partial[slot + 1u], bitcast<u32>(l));
  }
  storageBarrier();
  workgroupBarrier();
  if (li == 0u) {
    last = u32(atomicAdd(&counters[row * p.heads + h], 1u) == p.splits - 1u);
  }
  if (workgroupUniformLoad(&last) == 0u) { return; }
  storageBarrier();
  let first = (row * p.heads + h) * p.splits * stride;
  if (li < p.splits) { slices[li] = vec2f(load_partial(first + li * stride), load_partial(first + li * stride + 1u)); }
  workgroupBarrier();
  var gm = -3.0e38;
  for (var s = 0u; s < p.splits; s++) { gm = max(gm, slices[s].x); }
  var gl = 0.0;
  for (var s = 0u; s < p.splits; s++) { gl += slices[s].y * exp(slices[s].x - gm); }
  workgroupBarrier();
  if (li < p.splits) { slices[li].x = exp(slices[li].x - gm) / gl; }
  workgroupBarrier();
  for (var d = li; d < p.dim; d += WG) {
    let at = first + 2u + d;
    var a = 0.0;
    var s = 0u;
    for (; s + 4u <= p.splits; s += 4u) {
      a += (load_partial(at + s * stride) * slices[s].x + load_partial(at + (s + 1u) * stride) * slices[s + 1u].x) +
        (load_partial(at + (s + 2u) * stride) * slices[s + 2u].x + load_partial(at + (s + 3u) * stride) * slices[s + 3u].x);
    }
    for (; s < p.splits; s++) { a += load_partial(at + s * stride) * slices[s].x; }
    out[qbase + d] = a;
  }
  if (li == 0u) { atomicStore(&counters[row * p.heads + h], 0u); }
}
