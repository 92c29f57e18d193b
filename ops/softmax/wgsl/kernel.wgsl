// softmax/kernel: out[r, c] = exp(x[r, c] - max_r) / sum_c exp(x[r, c] - max_r), x is [rows, cols].
//
// Memory is read and written in quads (vec4s): quad q holds elements 4q .. 4q + 3. The bindings are
// 16-byte padded, so every quad is readable. `threads` invocations (a power of two) share a row,
// 256 / threads rows per workgroup; lane k of a row takes quads k, k + threads, ..., PER of them
// per chunk, all loads of a chunk issued before the first is used.
// - resident = 1 (the row fits one chunk): the row is read once into registers; the workgroup
//   reduces the maxima, exponentiates in place, reduces the sums, and writes. One read, one write.
// - resident = 0 (longer rows, one row per workgroup): each invocation keeps a running (max, sum)
//   over its chunks, rescaling the sum when the max grows; after the reductions the row is read a
//   second time to write the output, last chunk first, so that the chunks read last (the likeliest
//   still in L2) are read again first.
//
// Each of those has two paths, chosen by the (uniform) shape:
// - cols % 4 == 0 (`resident_aligned`, `streamed_aligned`): every row starts on a quad, so a quad is
//   wholly in its row or wholly past its end. Every load is issued unconditionally, its index
//   clamped to the row's last quad; the duplicate a clamped load reads is harmless to the max and
//   dropped from the sum by one compare per quad. A row past the end of x (surplus rows of the last
//   workgroup) reads the last row and writes nothing. Each quad is written with one vec4 store.
// - cols % 4 != 0 (`ragged`): rows start off quad boundaries, so the components outside a row are
//   masked per element (reading a neighbour's components is harmless), loads past the row's last
//   quad are skipped, and a partial quad is written one component at a time, so no element outside
//   the row is ever written.
// The aligned path is what made the kernel 1.42-1.58x faster than the masked code alone on the
// H200 (see mod.ts); of its parts, loading unconditionally instead of behind `if (j < quads)`
// gained the most.
//
// The reductions go through workgroup memory in two steps, each written out in full (no loop over
// a runtime count): groups of 16 partials, then every invocation combines its row's groups. Two
// barriers, whatever the row's width.
// Workgroups beyond 65,535 fold into y: workgroup = id.x + id.y * num_workgroups.x.
struct Params {
  rows: u32,
  cols: u32,
  threads: u32,   // invocations per row, a power of two <= 256
  resident: u32,  // 1 when every row fits PER * threads quads
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

const WORKGROUP = 256u;
const PER = 8u; // quads per invocation per chunk (mod.ts sizes `threads` with the same number)
// The starting maximum, the lowest finite f32 (WGSL has no infinity literal). A row of nothing but
// -inf never raises it, so every exp(x - max) is 0, the sum is 0, and 0 * (1 / 0) gives NaN, as
// torch does.
const LOWEST = -0x1.fffffep+127f;

// #include "row_sum.wgsl"

// The maximum of `value` over the t invocations of this invocation's row (t a power of two <= 256);
// each of them gets the result. t <= 16: every invocation combines its row's t partials (an index
// past the row clamped to its last lane: a duplicate, harmless to a maximum). t > 16: 16
// invocations each combine 16 partials of one row (lanes j, j + t / 16, ...: conflict-free reads),
// then every invocation combines its row's t / 16 group results. Consecutive reductions need no
// barrier in between: every read of `partials` precedes the last barrier and every read of
// `groups` precedes the next reduction's first.
fn reduce_max(value: f32, lid: u32, t: u32) -> f32 {
  if (t == 1u) {
    return value;
  }
  partials[lid] = value;
  workgroupBarrier();
  if (t <= 16u) {
    let base = lid - lid % t;
    var acc = partials[base];
    acc = max(acc, partials[base + min(1u, t - 1u)]);
    acc = max(acc, partials[base + min(2u, t - 1u)]);
    acc = max(acc, partials[base + min(3u, t - 1u)]);
    acc = max(acc, partials[base + min(4u, t - 1u)]);
    acc = max(acc, partials[base + min(5u, t - 1u)]);
    acc = max(acc, partials[base + min(6u, t - 1u)]);
    acc = max(acc, partials[base + min(7u, t - 1u)]);
    acc = max(acc, partials[base + min(8u, t - 1u)]);
    acc = max(acc, partials[base + min(9u, t - 1u)]);
    acc = max(acc, partials[base + min(10u, t - 1u)]);
    acc = max(acc, partials[base + min(11u, t - 1u)]);
    acc = max(acc, partials[base + min(12u, t - 1u)]);
    acc = max(acc, partials[base + min(13u, t - 1u)]);
    acc = max(acc, partials[base + min(14u, t - 1u)]);
    acc = max(acc, partials[base + min(15u, t - 1u)]);
    workgroupBarrier();
    return acc;
  }
  let per_row = t / 16u;
  if (lid < 16u) {
    let start = (lid / per_row) * t + lid % per_row;
    var acc = partials[start];
    acc = max(acc, partials[start + 1u * per_row]);
    acc = max(acc, partials[start + 2u * per_row]);
    acc = max(acc, partials[start + 3u * per_row]);
    acc = max(acc, partials[start + 4u * per_row]);
    acc = max(acc, partials[start + 5u * per_row]);
    acc = max(acc, partials[start + 6u * per_row]);
    acc = max(acc, partials[start + 7u * per_row]);
    acc = max(acc, partials[start + 8u * per_row]);
    acc = max(acc, partials[start + 9u * per_row]);
    acc = max(acc, partials[start + 10u * per_row]);
    acc = max(acc, partials[start + 11u * per_row]);
    acc = max(acc, partials[start + 12u * per_row]);
    acc = max(acc, partials[start + 13u * per_row]);
    acc = max(acc, partials[start + 14u * per_row]);
    acc = max(acc, partials[start + 15u * per_row]);
    groups[lid] = acc;
  }
  workgroupBarrier();
  let first = (lid / t) * per_row;
  var acc = groups[first];
  acc = max(acc, groups[first + min(1u, per_row - 1u)]);
  acc = max(acc, groups[first + min(2u, per_row - 1u)]);
  acc = max(acc, groups[first + min(3u, per_row - 1u)]);
  acc = max(acc, groups[first + min(4u, per_row - 1u)]);
  acc = max(acc, groups[first + min(5u, per_row - 1u)]);
  acc = max(acc, groups[first + min(6u, per_row - 1u)]);
  acc = max(acc, groups[first + min(7u, per_row - 1u)]);
  acc = max(acc, groups[first + min(8u, per_row - 1u)]);
  acc = max(acc, groups[first + min(9u, per_row - 1u)]);
  acc = max(acc, groups[first + min(10u, per_row - 1u)]);
  acc = max(acc, groups[first + min(11u, per_row - 1u)]);
  acc = max(acc, groups[first + min(12u, per_row - 1u)]);
  acc = max(acc, groups[first + min(13u, per_row - 1u)]);
  acc = max(acc, groups[first + min(14u, per_row - 1u)]);
  acc = max(acc, groups[first + min(15u, per_row - 1u)]);
  return acc;
}

fn hmax(v: vec4f) -> f32 {
  return max(max(v.x, v.y), max(v.z, v.w));
}

// The PER quads of one chunk are written out by hand as v0 .. v7, never as an array indexed in a
// loop: naga bounds-checks every index of a function-scope array and the driver may keep such an
// array in local memory (spilled through L1/L2); see mod.ts. Named values can stay in registers.

// ---------------------------------------------------------------- cols % 4 == 0

// Row `row` held in registers; lane `lane` of its t invocations.
fn resident_aligned(row: u32, lane: u32, lid: u32, t: u32) {
  let quads = params.cols / 4u;
  let live = row < params.rows;
  let first = min(row, params.rows - 1u) * quads;
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
  let own_max = max(max(max(hmax(v0), hmax(v1)), max(hmax(v2), hmax(v3))),
                    max(max(hmax(v4), hmax(v5)), max(hmax(v6), hmax(v7))));
  let row_max = reduce_max(max(own_max, LOWEST), lid, t);
  let e0 = select(vec4f(0.0), exp(v0 - row_max), j0 < quads);
  let e1 = select(vec4f(0.0), exp(v1 - row_max), j1 < quads);
  let e2 = select(vec4f(0.0), exp(v2 - row_max), j2 < quads);
  let e3 = select(vec4f(0.0), exp(v3 - row_max), j3 < quads);
  let e4 = select(vec4f(0.0), exp(v4 - row_max), j4 < quads);
  let e5 = select(vec4f(0.0), exp(v5 - row_max), j5 < quads);
  let e6 = select(vec4f(0.0), exp(v6 - row_max), j6 < quads);
  let e7 = select(vec4f(0.0), exp(v7 - row_max), j7 < quads);
  let own_sum = dot(((e0 + e1) + (e2 + e3)) + ((e4 + e5) + (e6 + e7)), vec4f(1.0));
  let scale = 1.0 / reduce_sum(own_sum, lid, t);
  if (live) {
    if (j0 < quads) {
      out[first + j0] = e0 * scale;
    }
    if (j1 < quads) {
      out[first + j1] = e1 * scale;
    }
    if (j2 < quads) {
      out[first + j2] = e2 * scale;
    }
    if (j3 < quads) {
      out[first + j3] = e3 * scale;
    }
    if (j4 < quads) {
      out[first + j4] = e4 * scale;
    }
    if (j5 < quads) {
      out[first + j5] = e5 * scale;
    }
    if (j6 < quads) {
      out[first + j6] = e6 * scale;
    }
    if (j7 < quads) {
      out[first + j7] = e7 * scale;
    }
  }
}

// Row `row` streamed in chunks of PER * t quads; lane `lane` of its t invocations.
fn streamed_aligned(row: u32, lane: u32, lid: u32, t: u32) {
  let quads = params.cols / 4u;
  let live = row < params.rows;
  let first = min(row, params.rows - 1u) * quads;
  let last = first + quads - 1u;
  let span = PER * t;
  var own_max = LOWEST;
  var own_sum = 0.0; // sum of exp(x - own_max) over this invocation's elements
  for (var base = 0u; base < quads; base += span) {
// #include "row_chunk_loads.wgsl"
    let chunk_max = max(own_max, max(max(max(hmax(v0), hmax(v1)), max(hmax(v2), hmax(v3))),
                                     max(max(hmax(v4), hmax(v5)), max(hmax(v6), hmax(v7)))));
    own_sum *= exp(own_max - chunk_max);
    own_max = chunk_max;
    let e = ((select(vec4f(0.0), exp(v0 - own_max), j0 < quads) + select(vec4f(0.0), exp(v1 - own_max), j1 < quads)) +
             (select(vec4f(0.0), exp(v2 - own_max), j2 < quads) + select(vec4f(0.0), exp(v3 - own_max), j3 < quads))) +
            ((select(vec4f(0.0), exp(v4 - own_max), j4 < quads) + select(vec4f(0.0), exp(v5 - own_max), j5 < quads)) +
             (select(vec4f(0.0), exp(v6 - own_max), j6 < quads) + select(vec4f(0.0), exp(v7 - own_max), j7 < quads)));
    own_sum += dot(e, vec4f(1.0));
  }
  let row_max = reduce_max(own_max, lid, t);
  let scale = 1.0 / reduce_sum(own_sum * exp(own_max - row_max), lid, t);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = (chunk - 1u) * span;
// #include "row_chunk_loads.wgsl"
    if (live) {
      if (j0 < quads) {
        out[first + j0] = exp(v0 - row_max) * scale;
      }
      if (j1 < quads) {
        out[first + j1] = exp(v1 - row_max) * scale;
      }
      if (j2 < quads) {
        out[first + j2] = exp(v2 - row_max) * scale;
      }
      if (j3 < quads) {
        out[first + j3] = exp(v3 - row_max) * scale;
      }
      if (j4 < quads) {
        out[first + j4] = exp(v4 - row_max) * scale;
      }
      if (j5 < quads) {
        out[first + j5] = exp(v5 - row_max) * scale;
      }
      if (j6 < quads) {
        out[first + j6] = exp(v6 - row_max) * scale;
      }
      if (j7 < quads) {
        out[first + j7] = exp(v7 - row_max) * scale;
      }
    }
  }
}

// ---------------------------------------------------------------- cols % 4 != 0

// #include "row_inside.wgsl"

// #include "row_store.wgsl"

// This invocation's row, set once at the start of `ragged`: its quads are first .. first + quads - 1,
// its elements begin .. end - 1; quads = 0 for a row past the end.
var<private> first: u32;
var<private> quads: u32;
var<private> begin: u32;
var<private> end: u32;

// Which components of the row's quad j belong to the row (none when j is past its last quad).
fn keep(j: u32) -> vec4<bool> {
  return inside(first + j, begin, end) & vec4<bool>(j < quads);
}

// The row's quad j, with `fill` in the components outside the row (all four past its last quad).
fn fetch(j: u32, fill: f32) -> vec4f {
  var v = vec4f(fill);
  if (j < quads) {
    v = select(v, x[first + j], inside(first + j, begin, end));
  }
  return v;
}

// Writes y as the row's quad j, if the row has one.
fn put(j: u32, y: vec4f) {
  if (j < quads) {
    store(first + j, y, inside(first + j, begin, end));
  }
}

// exp(v - m) in the components of the row's quad j that belong to the row, 0 elsewhere: a masked
// component never counts, even when m is LOWEST (a row of -inf), where exp(LOWEST - m) would be 1.
fn exp_in(j: u32, v: vec4f, m: f32) -> vec4f {
  return select(vec4f(0.0), exp(v - m), keep(j));
}

// The rows of workgroup `block` (256 / threads of them), cols % 4 != 0.
fn ragged(block: u32, lid: u32) {
  let t = params.threads;
  let lane = lid % t;
  let row = block * (WORKGROUP / t) + lid / t;
  begin = row * params.cols;
  end = begin + params.cols;
  first = begin / 4u;
  quads = select(0u, (end + 3u) / 4u - first, row < params.rows);
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
    let v0 = fetch(j0, LOWEST);
    let v1 = fetch(j1, LOWEST);
    let v2 = fetch(j2, LOWEST);
    let v3 = fetch(j3, LOWEST);
    let v4 = fetch(j4, LOWEST);
    let v5 = fetch(j5, LOWEST);
    let v6 = fetch(j6, LOWEST);
    let v7 = fetch(j7, LOWEST);
    let own_max = max(max(max(hmax(v0), hmax(v1)), max(hmax(v2), hmax(v3))),
                      max(max(hmax(v4), hmax(v5)), max(hmax(v6), hmax(v7))));
    let row_max = reduce_max(own_max, lid, t);
    let e0 = exp_in(j0, v0, row_max);
    let e1 = exp_in(j1, v1, row_max);
    let e2 = exp_in(j2, v2, row_max);
    let e3 = exp_in(j3, v3, row_max);
    let e4 = exp_in(j4, v4, row_max);
    let e5 = exp_in(j5, v5, row_max);
    let e6 = exp_in(j6, v6, row_max);
    let e7 = exp_in(j7, v7, row_max);
    let one = vec4f(1.0);
    let own_sum = dot(e0, one) + dot(e1, one) + dot(e2, one) + dot(e3, one) +
                  dot(e4, one) + dot(e5, one) + dot(e6, one) + dot(e7, one);
    let scale = 1.0 / reduce_sum(own_sum, lid, t);
    put(j0, e0 * scale);
    put(j1, e1 * scale);
    put(j2, e2 * scale);
    put(j3, e3 * scale);
    put(j4, e4 * scale);
    put(j5, e5 * scale);
    put(j6, e6 * scale);
    put(j7, e7 * scale);
    return;
  }

  let span = PER * t;
  var own_max = LOWEST;
  var own_sum = 0.0; // sum of exp(x - own_max) over this invocation's elements
  for (var base = 0u; base < quads; base += span) {
    let v0 = fetch(base + j0, LOWEST);
    let v1 = fetch(base + j1, LOWEST);
    let v2 = fetch(base + j2, LOWEST);
    let v3 = fetch(base + j3, LOWEST);
    let v4 = fetch(base + j4, LOWEST);
    let v5 = fetch(base + j5, LOWEST);
    let v6 = fetch(base + j6, LOWEST);
    let v7 = fetch(base + j7, LOWEST);
    let chunk_max = max(max(max(hmax(v0), hmax(v1)), max(hmax(v2), hmax(v3))),
                        max(max(hmax(v4), hmax(v5)), max(hmax(v6), hmax(v7))));
    if (chunk_max > own_max) {
      own_sum *= exp(own_max - chunk_max);
      own_max = chunk_max;
    }
    let one = vec4f(1.0);
    own_sum += dot(exp_in(base + j0, v0, own_max), one) + dot(exp_in(base + j1, v1, own_max), one) +
               dot(exp_in(base + j2, v2, own_max), one) + dot(exp_in(base + j3, v3, own_max), one) +
               dot(exp_in(base + j4, v4, own_max), one) + dot(exp_in(base + j5, v5, own_max), one) +
               dot(exp_in(base + j6, v6, own_max), one) + dot(exp_in(base + j7, v7, own_max), one);
  }
  let row_max = reduce_max(own_max, lid, t);
  let scale = 1.0 / reduce_sum(own_sum * exp(own_max - row_max), lid, t);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = (chunk - 1u) * span;
    let v0 = fetch(base + j0, 0.0);
    let v1 = fetch(base + j1, 0.0);
    let v2 = fetch(base + j2, 0.0);
    let v3 = fetch(base + j3, 0.0);
    let v4 = fetch(base + j4, 0.0);
    let v5 = fetch(base + j5, 0.0);
    let v6 = fetch(base + j6, 0.0);
    let v7 = fetch(base + j7, 0.0);
    put(base + j0, exp(v0 - row_max) * scale);
    put(base + j1, exp(v1 - row_max) * scale);
    put(base + j2, exp(v2 - row_max) * scale);
    put(base + j3, exp(v3 - row_max) * scale);
    put(base + j4, exp(v4 - row_max) * scale);
    put(base + j5, exp(v5 - row_max) * scale);
    put(base + j6, exp(v6 - row_max) * scale);
    put(base + j7, exp(v7 - row_max) * scale);
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let block = wid.x + wid.y * grid.x;
  if (params.cols % 4u != 0u) {
    ragged(block, lid);
    return;
  }
  let t = params.threads;
  let row = block * (WORKGROUP / t) + lid / t;
  if (params.resident != 0u) {
    resident_aligned(row, lid % t, lid, t);
  } else {
    streamed_aligned(row, lid % t, lid, t);
  }
}
