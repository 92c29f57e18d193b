// quantize/kernel.nvidia: per-row absmax int8 quantization, the same function as the portable
// kernel (codes and scales bit for bit, ties toward +Infinity; a row of zeros gets scale 0 and
// codes 0; the scale from exact_scale.wgsl, not WGSL's division), tuned for bandwidth.
//
// A row that is a whole number of vec4s and fits in registers (cols % 4 == 0, cols <= 256 * SLOTS
// * 4 = 8192) is spread over T invocations, T the least power of two that holds it in SLOTS vec4s
// each, so 256 / T rows share a workgroup (T depends on cols only, so it is uniform; mod.ts sizes
// the grid by the same rule, past 65,535 workgroups folding into y). Each invocation loads its
// vec4s into eight named values, all before any is used (a slot wholly past the row is skipped by
// a uniform test; an index past the row's end inside a slot is clamped to its last vec4, not
// masked), and keeps them: the row is read from memory once, its absmax reduced by a tree over the
// segment's T entries of workgroup memory, and the codes written from registers as vec4s. Sharing
// workgroups keeps short rows from leaving most of a 256-wide workgroup idle: on the H200
// (2026-11-30, GPU timestamps, warm clocks) 32768 x 2048 ran at 86.2% of the bandwidth roofline,
// against 72.7% for the same loads and stores with one row per workgroup. Other rows take one
// workgroup each and two passes: over vec4s when cols % 4 == 0, over single elements otherwise.
//
// The codes come from an f32 quotient where that is provably safe, and from the exact integer
// division of the portable kernel where it is not. q = x * f32(127 / absmax) has a relative error
// below 2.5 ulp (WGSL's division, for absmax in [2^-126, 2^126]) + 0.5 ulp (the product), so |q|
// is within 127.5 * 3 * 2^-23 < 5e-5 of the exact |x| * 127 / absmax (and x * ratio is exactly
// -(|x| * ratio) for x < 0). Rounding can only go the other way when the exact quotient is within
// that distance of a half-integer, so round(q) is trusted (every tie rule agrees away from ties)
// when |q - round(q)| < 0.4999, i.e. when q is more than 1e-4 from a tie. One test per vec4 sets a
// bit for each vec4 that fails it; after the fast stores those vec4s (rare) are decided exactly
// from a reload of x in one loop, so the integer division is not inlined once per element. Rows
// whose absmax is outside [2^-100, 2^126] (where the division's accuracy is not promised or
// 127 / absmax would overflow) are decided exactly throughout.
struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> codes: array<vec4i>;
@group(0) @binding(2) var<storage, read_write> scales: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const WG: u32 = 256u;
const SLOTS: u32 = 8u;              // vec4s of its row each invocation holds (SLOTS in mod.ts)
const SMALLEST: u32 = 0x0d800000u;  // 2^-100 as f32 bits
const LARGEST: u32 = 0x7e800000u;   // 2^126 as f32 bits
const NEAR: f32 = 0.4999;           // |q - round(q)| at or above this: within 1e-4 of a tie
const LEVELS: u32 = 127u;           // the largest code, for exact_code.wgsl

var<workgroup> maxima: array<u32, WG>;

// #include "magnitude.wgsl"

// #include "exact_scale.wgsl"

// #include "exact_code.wgsl"

fn exact_codes(v: vec4f, absmax_bits: u32) -> vec4i {
  let b = bitcast<vec4u>(v);
  return vec4i(
    exact_code(b.x, absmax_bits),
    exact_code(b.y, absmax_bits),
    exact_code(b.z, absmax_bits),
    exact_code(b.w, absmax_bits),
  );
}

// The codes of a vec4 from the f32 quotient x * ratio, stored at codes[at] when `store`; returns
// whether any of them lies within 1e-4 of a tie and must be decided exactly instead.
// Called once per register slot; the same code written out eight times ran no faster (H200,
// 2026-11-30: within 2% at every bench shape; harness/baselines/nvidia-h200-log/16-review.txt).
fn fast_codes(v: vec4f, ratio: f32, at: u32, store: bool) -> bool {
  let q = v * ratio;
  let r = round(q);
  if (store) {
    codes[at] = vec4i(r);
  }
  return any(abs(q - r) >= vec4f(NEAR));
}

fn magnitude_bits(v: vec4f) -> u32 {
  let m = bitcast<vec4u>(v) & vec4u(0x7fffffffu);
  return max(max(m.x, m.y), max(m.z, m.w));
}

// The largest `largest` of the T invocations of this invocation's segment (lanes 0 .. T - 1 at
// maxima[lid - lane ..]): a tree over log2(T) barriers; T is uniform. For non-negative floats the
// order of their bit patterns as u32 is the order of their values, so the absmax is found exactly.
fn row_max(lid: u32, lane: u32, T: u32, largest: u32) -> u32 {
  maxima[lid] = largest;
  workgroupBarrier();
  for (var s = T >> 1u; s > 0u; s >>= 1u) {
    if (lane < s) {
      maxima[lid] = max(maxima[lid], maxima[lid + s]);
    }
    workgroupBarrier();
  }
  return maxima[lid - lane];
}

fn x_at(i: u32) -> f32 {
  return x[i >> 2u][i & 3u];
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let cols = params.cols;
  let quads = cols / 4u;
  let resident = (cols & 3u) == 0u && quads <= WG * SLOTS;
  // T = the least power of two >= ceil(quads / SLOTS) for a resident row, else 256.
  var T = WG;
  if (resident) {
    T = 1u << (32u - countLeadingZeros((quads + SLOTS - 1u) / SLOTS - 1u));
  }
  let shift = countTrailingZeros(T);
  let g = wid.x + wid.y * grid.x;
  if ((g << (8u - shift)) >= params.rows) {
    return;
  }
  let lane = lid & (T - 1u);
  let row = (g << (8u - shift)) + (lid >> shift);
  // The last workgroup's segments past the last row still take part in the barriers.
  let live = row < params.rows;

  if (resident) {
    let base = row * quads;
    let last = quads - 1u;
    var v0 = vec4f(0.0);
    if (live) {
      v0 = x[base + min(lane, last)];
    }
    var v1 = vec4f(0.0);
    if (live && 1u * T < quads) {
      v1 = x[base + min(lane + 1u * T, last)];
    }
    var v2 = vec4f(0.0);
    if (live && 2u * T < quads) {
      v2 = x[base + min(lane + 2u * T, last)];
    }
    var v3 = vec4f(0.0);
    if (live && 3u * T < quads) {
      v3 = x[base + min(lane + 3u * T, last)];
    }
    var v4 = vec4f(0.0);
    if (live && 4u * T < quads) {
      v4 = x[base + min(lane + 4u * T, last)];
    }
    var v5 = vec4f(0.0);
    if (live && 5u * T < quads) {
      v5 = x[base + min(lane + 5u * T, last)];
    }
    var v6 = vec4f(0.0);
    if (live && 6u * T < quads) {
      v6 = x[base + min(lane + 6u * T, last)];
    }
    var v7 = vec4f(0.0);
    if (live && 7u * T < quads) {
      v7 = x[base + min(lane + 7u * T, last)];
    }
    let largest = max(
      max(max(magnitude_bits(v0), magnitude_bits(v1)), max(magnitude_bits(v2), magnitude_bits(v3))),
      max(max(magnitude_bits(v4), magnitude_bits(v5)), max(magnitude_bits(v6), magnitude_bits(v7))),
    );
    let absmax_bits = row_max(lid, lane, T, largest);
    let absmax = bitcast<f32>(absmax_bits);
    if (live && lane == 0u) {
      scales[row] = exact_scale(absmax_bits);
    }
    let fast = absmax_bits >= SMALLEST && absmax_bits <= LARGEST;
    let ratio = select(0.0, 127.0 / absmax, fast);
    // Bit k: vec4 k must be decided exactly (all of them when the row is outside the fast range).
    var need = select(255u, 0u, fast);
    // lane < T <= quads: slot 0 is always inside the row.
    need |= select(0u, 1u, fast_codes(v0, ratio, base + lane, live));
    if (1u * T < quads) {
      need |= select(0u, 2u, fast_codes(v1, ratio, base + lane + 1u * T, live && lane + 1u * T < quads));
    }
    if (2u * T < quads) {
      need |= select(0u, 4u, fast_codes(v2, ratio, base + lane + 2u * T, live && lane + 2u * T < quads));
    }
    if (3u * T < quads) {
      need |= select(0u, 8u, fast_codes(v3, ratio, base + lane + 3u * T, live && lane + 3u * T < quads));
    }
    if (4u * T < quads) {
      need |= select(0u, 16u, fast_codes(v4, ratio, base + lane + 4u * T, live && lane + 4u * T < quads));
    }
    if (5u * T < quads) {
      need |= select(0u, 32u, fast_codes(v5, ratio, base + lane + 5u * T, live && lane + 5u * T < quads));
    }
    if (6u * T < quads) {
      need |= select(0u, 64u, fast_codes(v6, ratio, base + lane + 6u * T, live && lane + 6u * T < quads));
    }
    if (7u * T < quads) {
      need |= select(0u, 128u, fast_codes(v7, ratio, base + lane + 7u * T, live && lane + 7u * T < quads));
    }
    if (live && need != 0u) {
      for (var k = 0u; k < SLOTS; k++) {
        let c = lane + k * T;
        if ((need & (1u << k)) != 0u && c < quads) {
          codes[base + c] = exact_codes(x[base + c], absmax_bits);
        }
      }
    }
    return;
  }

  // Not resident: T = 256, one row per workgroup, read twice.
  if ((cols & 3u) == 0u) {
    let base = row * quads;
    var largest = 0u;
    for (var c = lid; c < quads; c += WG) {
      largest = max(largest, magnitude_bits(x[base + c]));
    }
    let absmax_bits = row_max(lid, lane, T, largest);
    let absmax = bitcast<f32>(absmax_bits);
    if (lid == 0u) {
      scales[row] = exact_scale(absmax_bits);
    }
    let fast = absmax_bits >= SMALLEST && absmax_bits <= LARGEST;
    let ratio = select(0.0, 127.0 / absmax, fast);
    for (var c = lid; c < quads; c += WG) {
      let v = x[base + c];
      let q = v * ratio;
      let r = round(q);
      var code = vec4i(r);
      if (!fast || any(abs(q - r) >= vec4f(NEAR))) {
        code = exact_codes(v, absmax_bits);
      }
      codes[base + c] = code;
    }
    return;
  }
  let base = row * cols;
  var largest = 0u;
  for (var c = lid; c < cols; c += WG) {
    largest = max(largest, bitcast<u32>(x_at(base + c)) & 0x7fffffffu);
  }
  let absmax_bits = row_max(lid, lane, T, largest);
  let absmax = bitcast<f32>(absmax_bits);
  if (lid == 0u) {
    scales[row] = exact_scale(absmax_bits);
  }
  let fast = absmax_bits >= SMALLEST && absmax_bits <= LARGEST;
  let ratio = select(0.0, 127.0 / absmax, fast);
  for (var c = lid; c < cols; c += WG) {
    let i = base + c;
    let v = x_at(i);
    let q = v * ratio;
    let r = round(q);
    var code = i32(r);
    if (!fast || abs(q - r) >= NEAR) {
      code = exact_code(bitcast<u32>(v), absmax_bits);
    }
    codes[i >> 2u][i & 3u] = code;
  }
}
