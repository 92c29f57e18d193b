// ctc_decode/kernel: greedy CTC decoding, one workgroup per sequence of logits [B, T, C].
//
// The workgroup walks its sequence 256 frames at a time. Invocation k takes frame t = block + k:
// its argmax over C (the first of equal maxima; the first NaN wins, as torch.argmax), read as vec4s
// when C % 4 == 0.
// The labels go to workgroup memory; a frame is kept when its label is not the blank and differs
// from the frame before it (the previous block's last label carried over), which is "collapse
// repeats, then drop blanks". A scan of the keep flags (Hillis-Steele, 8 steps) gives each kept
// frame its place after the labels already written; then the rest of the row is filled with -1 and
// the count written to lengths[b].
struct Params {
  t: u32,
  c: u32,
  blank: u32,
  batch: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<vec4f>;
@group(0) @binding(1) var<storage, read> input_lengths: array<u32>;
@group(0) @binding(2) var<storage, read_write> tokens: array<i32>;
@group(0) @binding(3) var<storage, read_write> lengths: array<i32>;
@group(0) @binding(4) var<uniform> params: Params;

const WG = 256u;

var<workgroup> labels: array<u32, 256>;
var<workgroup> scan: array<u32, 256>;
var<workgroup> frames_shared: u32;

fn logit(e: u32) -> f32 {
  return logits[e >> 2u][e & 3u];
}

// Whether v is NaN, from its bits (a compiler may fold a float self-comparison away).
fn is_nan(v: f32) -> bool {
  return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

// Whether v replaces best as torch.argmax ranks them: the first NaN is the maximum (nothing replaces
// it), a NaN replaces any number, and otherwise only a strictly larger value does.
fn beats(v: f32, best: f32) -> bool {
  return !is_nan(best) && (is_nan(v) || v > best);
}

// The first index of the largest of C values from element `row` on (torch.argmax's: a NaN is larger
// than every number).
fn argmax(row: u32) -> u32 {
  var best = logit(row);
  var arg = 0u;
  if (params.c % 4u == 0u) {
    let q0 = row / 4u;
    for (var q = 0u; q < params.c / 4u; q++) {
      let v = logits[q0 + q];
      if (beats(v.x, best)) { best = v.x; arg = 4u * q; }
      if (beats(v.y, best)) { best = v.y; arg = 4u * q + 1u; }
      if (beats(v.z, best)) { best = v.z; arg = 4u * q + 2u; }
      if (beats(v.w, best)) { best = v.w; arg = 4u * q + 3u; }
    }
    return arg;
  }
  for (var c = 1u; c < params.c; c++) {
    let v = logit(row + c);
    if (beats(v, best)) {
      best = v;
      arg = c;
    }
  }
  return arg;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let b = wid.x + wid.y * groups.x;
  if (b >= params.batch) {
    return;  // uniform across the workgroup
  }
  let k = lid.x;
  if (k == 0u) {
    frames_shared = input_lengths[b];
  }
  let frames = workgroupUniformLoad(&frames_shared);  // uniform: the loop below has barriers
  let out0 = b * params.t;
  var count = 0u;
  var carry = 0xffffffffu;  // the label of the frame before the block; none before frame 0
  for (var block = 0u; block < frames; block += WG) {
    let t = block + k;
    var label = 0xffffffffu;
    if (t < frames) {
      label = argmax((b * params.t + t) * params.c);
    }
    labels[k] = label;
    workgroupBarrier();
    let previous = select(labels[max(k, 1u) - 1u], carry, k == 0u);
    let keep = t < frames && label != params.blank && label != previous;
    scan[k] = select(0u, 1u, keep);
    workgroupBarrier();
    for (var step = 1u; step < WG; step *= 2u) {
      var add = 0u;
      if (k >= step) {
        add = scan[k - step];
      }
      workgroupBarrier();
      scan[k] += add;
      workgroupBarrier();
    }
    if (keep) {
      tokens[out0 + count + scan[k] - 1u] = i32(label);
    }
    count += scan[WG - 1u];
    carry = labels[WG - 1u];
    workgroupBarrier();
  }
  for (var t = count + k; t < params.t; t += WG) {
    tokens[out0 + t] = -1;
  }
  if (k == 0u) {
    lengths[b] = i32(count);
  }
}
