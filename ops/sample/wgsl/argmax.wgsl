// sample/argmax: the greedy choice of a generation loop kept on the GPU. The first index of the
// largest logit (+Infinity included, as torch.argmax) goes where the next step's embedding gather
// reads it (`ids[0]`) and to `tokens[state.step]`; the step advances by one and the position by
// `advance` (the rows of the call: the next call's first row follows them). A row holding NaN gives
// NONFINITE_LOGITS (2^32 - 2) and a row of -Infinity NO_POSSIBLE_TOKEN (2^32 - 1) instead of an id.
//
// Each workgroup finds the best of a slice of SLICE logits and stores it (through atomics, so the
// combining workgroup reads the device's coherent copy), and raises `counter[1]` on a NaN; the last
// workgroup to finish (an atomic counter) picks the best of the slices, the lower index on a tie, and
// resets both counters (so they must start at zero, and stay so between dispatches).
// #include "decode_state.wgsl"
// #include "is_nan.wgsl"
struct P { vocab: u32, advance: u32 }
const SLICE = 4096u;
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
    if (is_nan(v)) { atomicOr(&counter[1], 1u); }
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
    var id = best_i[0]; // past the vocabulary: no logit above -Infinity (-FLT_MAX included)
    if (id >= p.vocab) { id = 4294967295u; } // NO_POSSIBLE_TOKEN
    if (atomicLoad(&counter[1]) != 0u) { id = 4294967294u; } // NONFINITE_LOGITS
    ids[0] = id;
    tokens[state.step] = id;
    state.step += 1u;
    state.pos0 += p.advance;
    atomicStore(&counter[0], 0u);
    atomicStore(&counter[1], 0u);
  }
}