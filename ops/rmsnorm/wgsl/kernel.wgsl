// rmsnorm/kernel: out[n, c] = x[n, c] * inverseSqrt(mean_c(x[n, c]^2) + eps) * weight[n % groups, c],
// x is [rows, d]; groups = 0 means no weight (ones).
//
// Memory is read and written in quads (vec4s): quad q holds elements 4q .. 4q + 3. The bindings are
// 16-byte padded, so every quad is readable. `threads` invocations (a power of two) share a row,
// 256 / threads rows per workgroup; lane k of a row takes quads k, k + threads, ..., PER of them
// per chunk, all loads of a chunk issued before the first is used.
// - resident = 1 (the row fits one chunk): the row is read once into registers, its sum of squares
//   reduced through workgroup memory, and the row scaled and written from registers.
// - resident = 0 (longer rows, one row per workgroup): the sum of squares is accumulated over the
//   chunks, and the row is read a second time to write it, last chunk first, so that the chunks
//   read last (the likeliest still in L2) are read again first.
//
// Each of those has two paths, chosen by the (uniform) shape:
// - d % 4 == 0 (`resident_aligned`, `streamed_aligned`): every row starts on a quad, so a quad is
//   wholly in its row or wholly past its end, and lines up with a quad of the weight. Every load is
//   issued unconditionally, its index clamped to the row's last quad; the duplicate a clamped load
//   reads is dropped from the sum by one compare per quad. A row past the end of x (surplus rows of
//   the last workgroup) reads the last row and writes nothing. The weight quads are loaded together
//   after the reduction (for a row in registers; with x in the second pass of a streamed row), and
//   each quad is written with one vec4 store.
// - d % 4 != 0 (`ragged`): rows start off quad boundaries, so the components outside a row are
//   masked per element (reading a neighbour's components is harmless), loads past the row's last
//   quad are skipped, the weight is read per component, and a partial quad is written one
//   component at a time, so no element outside the row is ever written.
//
// The reduction goes through workgroup memory in two steps, each written out in full (no loop over
// a runtime count): groups of 16 partials, then every invocation adds its row's groups. Two
// barriers, whatever the row's width.
// Workgroups beyond 65,535 fold into y: workgroup = id.x + id.y * num_workgroups.x.
struct Params {
  rows: u32,
  d: u32,
  groups: u32,
  eps: f32,
  threads: u32,   // invocations per row, a power of two <= 256
  resident: u32,  // 1 when every row fits PER * threads quads
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const WORKGROUP = 256u;
const PER = 8u; // quads per invocation per chunk (mod.ts sizes `threads` with the same number)

// #include "row_sum.wgsl"

// The PER quads of one chunk are written out by hand as v0 .. v7, never as an array indexed in a
// loop: naga bounds-checks every index of a function-scope array and the driver may keep such an
// array in local memory (spilled through L1/L2); see mod.ts. Named values can stay in registers.

// ---------------------------------------------------------------- d % 4 == 0

// Row `row` held in registers; lane `lane` of its t invocations.
fn resident_aligned(row: u32, lane: u32, lid: u32, t: u32) {
  let quads = params.d / 4u;
  let live = row < params.rows;
  let r = min(row, params.rows - 1u);
  let first = r * quads;
  let last = first + quads - 1u;
  let j0 = lane;
  let j1 = lane + t;
  let j2 = lane + 2u * t;
  let j3 = lane + 3u * t;
  let j4 = lane + 4u * t;
  let j5 = lane + 5u * t;
  let j6 = lane + 6u * t;
  let j7 = lane + 7u * t;
  let v0 = x[min(first + j0, last)];
  let v1 = x[min(first + j1, last)];
  let v2 = x[min(first + j2, last)];
  let v3 = x[min(first + j3, last)];
  let v4 = x[min(first + j4, last)];
  let v5 = x[min(first + j5, last)];
  let v6 = x[min(first + j6, last)];
  let v7 = x[min(first + j7, last)];
  let squares = ((select(0.0, dot(v0, v0), j0 < quads) + select(0.0, dot(v1, v1), j1 < quads)) +
                 (select(0.0, dot(v2, v2), j2 < quads) + select(0.0, dot(v3, v3), j3 < quads))) +
                 ((select(0.0, dot(v4, v4), j4 < quads) + select(0.0, dot(v5, v5), j5 < quads)) +
                 (select(0.0, dot(v6, v6), j6 < quads) + select(0.0, dot(v7, v7), j7 < quads)));
  let scale = inverseSqrt(reduce_sum(squares, lid, t) / f32(params.d) + params.eps);
  var w0 = vec4f(1.0);
  var w1 = vec4f(1.0);
  var w2 = vec4f(1.0);
  var w3 = vec4f(1.0);
  var w4 = vec4f(1.0);
  var w5 = vec4f(1.0);
  var w6 = vec4f(1.0);
  var w7 = vec4f(1.0);
  if (params.groups != 0u) {
    let g = (r % params.groups) * quads;
    w0 = weight[g + min(j0, quads - 1u)];
    w1 = weight[g + min(j1, quads - 1u)];
    w2 = weight[g + min(j2, quads - 1u)];
    w3 = weight[g + min(j3, quads - 1u)];
    w4 = weight[g + min(j4, quads - 1u)];
    w5 = weight[g + min(j5, quads - 1u)];
    w6 = weight[g + min(j6, quads - 1u)];
    w7 = weight[g + min(j7, quads - 1u)];
  }
  if (live) {
    if (j0 < quads) {
      out[first + j0] = v0 * (scale * w0);
    }
    if (j1 < quads) {
      out[first + j1] = v1 * (scale * w1);
    }
    if (j2 < quads) {
      out[first + j2] = v2 * (scale * w2);
    }
    if (j3 < quads) {
      out[first + j3] = v3 * (scale * w3);
    }
    if (j4 < quads) {
      out[first + j4] = v4 * (scale * w4);
    }
    if (j5 < quads) {
      out[first + j5] = v5 * (scale * w5);
    }
    if (j6 < quads) {
      out[first + j6] = v6 * (scale * w6);
    }
    if (j7 < quads) {
      out[first + j7] = v7 * (scale * w7);
    }
  }
}

// Row `row` streamed in chunks of PER * t quads; lane `lane` of its t invocations. The second pass
// reads x and the weight together.
fn streamed_aligned(row: u32, lane: u32, lid: u32, t: u32) {
  let quads = params.d / 4u;
  let live = row < params.rows;
  let r = min(row, params.rows - 1u);
  let first = r * quads;
  let last = first + quads - 1u;
  let span = PER * t;
  var squares = 0.0;
  for (var base = 0u; base < quads; base += span) {
// #include "row_chunk_loads.wgsl"
    squares += ((select(0.0, dot(v0, v0), j0 < quads) + select(0.0, dot(v1, v1), j1 < quads)) +
                (select(0.0, dot(v2, v2), j2 < quads) + select(0.0, dot(v3, v3), j3 < quads))) +
                ((select(0.0, dot(v4, v4), j4 < quads) + select(0.0, dot(v5, v5), j5 < quads)) +
                (select(0.0, dot(v6, v6), j6 < quads) + select(0.0, dot(v7, v7), j7 < quads)));
  }
  let scale = inverseSqrt(reduce_sum(squares, lid, t) / f32(params.d) + params.eps);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = (chunk - 1u) * span;
// #include "row_chunk_loads.wgsl"
    var w0 = vec4f(1.0);
    var w1 = vec4f(1.0);
    var w2 = vec4f(1.0);
    var w3 = vec4f(1.0);
    var w4 = vec4f(1.0);
    var w5 = vec4f(1.0);
    var w6 = vec4f(1.0);
    var w7 = vec4f(1.0);
    if (params.groups != 0u) {
      let g = (r % params.groups) * quads;
      w0 = weight[g + min(j0, quads - 1u)];
      w1 = weight[g + min(j1, quads - 1u)];
      w2 = weight[g + min(j2, quads - 1u)];
      w3 = weight[g + min(j3, quads - 1u)];
      w4 = weight[g + min(j4, quads - 1u)];
      w5 = weight[g + min(j5, quads - 1u)];
      w6 = weight[g + min(j6, quads - 1u)];
      w7 = weight[g + min(j7, quads - 1u)];
    }
    if (live) {
      if (j0 < quads) {
        out[first + j0] = v0 * (scale * w0);
      }
      if (j1 < quads) {
        out[first + j1] = v1 * (scale * w1);
      }
      if (j2 < quads) {
        out[first + j2] = v2 * (scale * w2);
      }
      if (j3 < quads) {
        out[first + j3] = v3 * (scale * w3);
      }
      if (j4 < quads) {
        out[first + j4] = v4 * (scale * w4);
      }
      if (j5 < quads) {
        out[first + j5] = v5 * (scale * w5);
      }
      if (j6 < quads) {
        out[first + j6] = v6 * (scale * w6);
      }
      if (j7 < quads) {
        out[first + j7] = v7 * (scale * w7);
      }
    }
  }
}

// ---------------------------------------------------------------- d % 4 != 0

// #include "row_inside.wgsl"

// This invocation's row, set once at the start of `ragged`: its quads are first .. first + quads - 1,
// its elements begin .. end - 1 (quads = 0 for a row past the end); gamma is the index of the first
// element of its weight row.
var<private> first: u32;
var<private> quads: u32;
var<private> begin: u32;
var<private> end: u32;
var<private> gamma: u32;

// The weights of quad q's components (ones without a weight), one load per component in the row:
// the row starts off a quad boundary, so its quads do not line up with the weight's (u32
// arithmetic wraps, so i + c is exact).
fn weights(q: u32, mask: vec4<bool>) -> vec4f {
  if (params.groups == 0u) {
    return vec4f(1.0);
  }
  let i = gamma + 4u * q - begin;
  var w = vec4f(0.0);
  if (mask.x) {
    w.x = weight[i / 4u][i % 4u];
  }
  if (mask.y) {
    w.y = weight[(i + 1u) / 4u][(i + 1u) % 4u];
  }
  if (mask.z) {
    w.z = weight[(i + 2u) / 4u][(i + 2u) % 4u];
  }
  if (mask.w) {
    w.w = weight[(i + 3u) / 4u][(i + 3u) % 4u];
  }
  return w;
}

// #include "row_store.wgsl"

// The row's quad j, with 0 in the components outside the row (all four past its last quad).
fn fetch(j: u32) -> vec4f {
  var v = vec4f(0.0);
  if (j < quads) {
    v = select(v, x[first + j], inside(first + j, begin, end));
  }
  return v;
}

// Writes v * scale * weight as the row's quad j, if the row has one.
fn put(j: u32, v: vec4f, scale: f32) {
  if (j < quads) {
    let mask = inside(first + j, begin, end);
    store(first + j, v * (scale * weights(first + j, mask)), mask);
  }
}

// The rows of workgroup `block` (256 / threads of them), d % 4 != 0.
fn ragged(block: u32, lid: u32) {
  let t = params.threads;
  let lane = lid % t;
  let row = block * (WORKGROUP / t) + lid / t;
  begin = row * params.d;
  end = begin + params.d;
  first = begin / 4u;
  quads = select(0u, (end + 3u) / 4u - first, row < params.rows);
  gamma = select(0u, (row % max(params.groups, 1u)) * params.d, params.groups > 0u);
  // Quad k of this invocation's chunk at `base` is base + k * t (PER = 8 of them).
  let j0 = lane;
  let j1 = lane + t;
  let j2 = lane + 2u * t;
  let j3 = lane + 3u * t;
  let j4 = lane + 4u * t;
  let j5 = lane + 5u * t;
  let j6 = lane + 6u * t;
  let j7 = lane + 7u * t;

  if (params.resident != 0u) {
    let v0 = fetch(j0);
    let v1 = fetch(j1);
    let v2 = fetch(j2);
    let v3 = fetch(j3);
    let v4 = fetch(j4);
    let v5 = fetch(j5);
    let v6 = fetch(j6);
    let v7 = fetch(j7);
    let squares = dot(v0, v0) + dot(v1, v1) + dot(v2, v2) + dot(v3, v3) +
                  dot(v4, v4) + dot(v5, v5) + dot(v6, v6) + dot(v7, v7);
    let scale = inverseSqrt(reduce_sum(squares, lid, t) / f32(params.d) + params.eps);
    put(j0, v0, scale);
    put(j1, v1, scale);
    put(j2, v2, scale);
    put(j3, v3, scale);
    put(j4, v4, scale);
    put(j5, v5, scale);
    put(j6, v6, scale);
    put(j7, v7, scale);
    return;
  }

  let span = PER * t;
  var squares = 0.0;
  for (var base = 0u; base < quads; base += span) {
    let v0 = fetch(base + j0);
    let v1 = fetch(base + j1);
    let v2 = fetch(base + j2);
    let v3 = fetch(base + j3);
    let v4 = fetch(base + j4);
    let v5 = fetch(base + j5);
    let v6 = fetch(base + j6);
    let v7 = fetch(base + j7);
    squares += dot(v0, v0) + dot(v1, v1) + dot(v2, v2) + dot(v3, v3) +
               dot(v4, v4) + dot(v5, v5) + dot(v6, v6) + dot(v7, v7);
  }
  let scale = inverseSqrt(reduce_sum(squares, lid, t) / f32(params.d) + params.eps);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = (chunk - 1u) * span;
    let v0 = fetch(base + j0);
    let v1 = fetch(base + j1);
    let v2 = fetch(base + j2);
    let v3 = fetch(base + j3);
    let v4 = fetch(base + j4);
    let v5 = fetch(base + j5);
    let v6 = fetch(base + j6);
    let v7 = fetch(base + j7);
    put(base + j0, v0, scale);
    put(base + j1, v1, scale);
    put(base + j2, v2, scale);
    put(base + j3, v3, scale);
    put(base + j4, v4, scale);
    put(base + j5, v5, scale);
    put(base + j6, v6, scale);
    put(base + j7, v7, scale);
  }
}

// #include "row_main.wgsl"
