// The body of rmsnorm's two entry points, `kernel` and `modulated` (every function but the hooks
// below and row_main.wgsl's entry point). Expects of the including kernel: the bindings x, weight
// and out (array<vec4f>), the uniform `params` with rows, d, groups, eps, threads and resident,
// `const WORKGROUP = 256u`, `const PER = 8u`, and two hooks applied to every normalised, weighted
// value just before it is stored:
// - modulate_quad(row, j, y) -> vec4f: y is quad j of row `row` (d % 4 == 0);
// - modulate_elements(begin, q, mask, y) -> vec4f: y is quad q of x's binding, its components in
//   `mask` belonging to the row whose first element is `begin` (d % 4 != 0).
// `kernel` returns y from both; `modulated` applies its adaLN scale and shift.
// #include "row_sum.wgsl"

// The PER quads of one chunk are the named members of a Quads (row_quads.wgsl), never an array
// indexed in a loop: naga bounds-checks every index of a function-scope array and the driver may keep
// such an array in local memory (spilled through L1/L2); see mod.ts. Named values can stay in registers.
// #include "row_quads.wgsl"

// ---------------------------------------------------------------- d % 4 == 0

// The chunk's quads of x (the row's quads are first .. last), each load clamped to the row's last
// quad (the caller drops what lies past it).
fn x_quads(first: u32, last: u32, base: u32, lane: u32, t: u32) -> Quads {
// #include "row_chunk_loads.wgsl"
  return Quads(v0, v1, v2, v3, v4, v5, v6, v7);
}

// The sum of squares of the chunk's quads v in the row.
fn squares_of(v: Quads, quads: u32, base: u32, lane: u32, t: u32) -> f32 {
// #include "row_chunk_quads.wgsl"
  return ((select(0.0, dot(v.q0, v.q0), j0 < quads) + select(0.0, dot(v.q1, v.q1), j1 < quads)) +
          (select(0.0, dot(v.q2, v.q2), j2 < quads) + select(0.0, dot(v.q3, v.q3), j3 < quads))) +
          ((select(0.0, dot(v.q4, v.q4), j4 < quads) + select(0.0, dot(v.q5, v.q5), j5 < quads)) +
          (select(0.0, dot(v.q6, v.q6), j6 < quads) + select(0.0, dot(v.q7, v.q7), j7 < quads)));
}

// The weight row of row r's quads of the chunk (weight row r % groups, each index clamped to the
// row's last quad); ones without a weight.
fn weight_quads(r: u32, quads: u32, base: u32, lane: u32, t: u32) -> Quads {
  if (params.groups == 0u) {
    let one = vec4f(1.0);
    return Quads(one, one, one, one, one, one, one, one);
  }
  let g = (r % params.groups) * quads;
// #include "row_chunk_quads.wgsl"
  return Quads(
    weight[g + min(j0, quads - 1u)],
    weight[g + min(j1, quads - 1u)],
    weight[g + min(j2, quads - 1u)],
    weight[g + min(j3, quads - 1u)],
    weight[g + min(j4, quads - 1u)],
    weight[g + min(j5, quads - 1u)],
    weight[g + min(j6, quads - 1u)],
    weight[g + min(j7, quads - 1u)],
  );
}

// Writes the chunk's quads in row r: v * (inv_rms * w), through modulate_quad.
fn store_quads(r: u32, first: u32, quads: u32, base: u32, lane: u32, t: u32, v: Quads, w: Quads, inv_rms: f32) {
// #include "row_chunk_quads.wgsl"
  if (j0 < quads) {
    out[first + j0] = modulate_quad(r, j0, v.q0 * (inv_rms * w.q0));
  }
  if (j1 < quads) {
    out[first + j1] = modulate_quad(r, j1, v.q1 * (inv_rms * w.q1));
  }
  if (j2 < quads) {
    out[first + j2] = modulate_quad(r, j2, v.q2 * (inv_rms * w.q2));
  }
  if (j3 < quads) {
    out[first + j3] = modulate_quad(r, j3, v.q3 * (inv_rms * w.q3));
  }
  if (j4 < quads) {
    out[first + j4] = modulate_quad(r, j4, v.q4 * (inv_rms * w.q4));
  }
  if (j5 < quads) {
    out[first + j5] = modulate_quad(r, j5, v.q5 * (inv_rms * w.q5));
  }
  if (j6 < quads) {
    out[first + j6] = modulate_quad(r, j6, v.q6 * (inv_rms * w.q6));
  }
  if (j7 < quads) {
    out[first + j7] = modulate_quad(r, j7, v.q7 * (inv_rms * w.q7));
  }
}

// Row `row` held in registers; lane `lane` of its t invocations.
fn resident_aligned(row: u32, lane: u32, lid: u32, t: u32) {
  let quads = params.d / 4u;
  let r = min(row, params.rows - 1u);
  let first = r * quads;
  let v = x_quads(first, first + quads - 1u, 0u, lane, t);
  let inv_rms = inverseSqrt(reduce_sum(squares_of(v, quads, 0u, lane, t), lid, t) / f32(params.d) + params.eps);
  let w = weight_quads(r, quads, 0u, lane, t);
  if (row < params.rows) {
    store_quads(r, first, quads, 0u, lane, t, v, w, inv_rms);
  }
}

// Row `row` streamed in chunks of PER * t quads; lane `lane` of its t invocations. The second pass
// reads x and the weight together.
fn streamed_aligned(row: u32, lane: u32, lid: u32, t: u32) {
  let quads = params.d / 4u;
  let r = min(row, params.rows - 1u);
  let first = r * quads;
  let last = first + quads - 1u;
  let span = PER * t;
  var squares = 0.0;
  for (var base = 0u; base < quads; base += span) {
    squares += squares_of(x_quads(first, last, base, lane, t), quads, base, lane, t);
  }
  let inv_rms = inverseSqrt(reduce_sum(squares, lid, t) / f32(params.d) + params.eps);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = (chunk - 1u) * span;
    let v = x_quads(first, last, base, lane, t);
    let w = weight_quads(r, quads, base, lane, t);
    if (row < params.rows) {
      store_quads(r, first, quads, base, lane, t, v, w, inv_rms);
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

// Writes v * inv_rms * weight (through modulate_elements) as the row's quad j, if the row has one.
fn put(j: u32, v: vec4f, inv_rms: f32) {
  if (j < quads) {
    let mask = inside(first + j, begin, end);
    store(first + j, modulate_elements(begin, first + j, mask, v * (inv_rms * weights(first + j, mask))), mask);
  }
}

// The sum of squares of the chunk's quads v (from fetch_quads: 0 outside the row).
fn ragged_squares(v: Quads) -> f32 {
  return dot(v.q0, v.q0) + dot(v.q1, v.q1) + dot(v.q2, v.q2) + dot(v.q3, v.q3) +
         dot(v.q4, v.q4) + dot(v.q5, v.q5) + dot(v.q6, v.q6) + dot(v.q7, v.q7);
}

// Writes the chunk's quads v normalised and weighted (put).
fn put_quads(v: Quads, inv_rms: f32, base: u32, lane: u32, t: u32) {
// #include "row_chunk_quads.wgsl"
  put(j0, v.q0, inv_rms);
  put(j1, v.q1, inv_rms);
  put(j2, v.q2, inv_rms);
  put(j3, v.q3, inv_rms);
  put(j4, v.q4, inv_rms);
  put(j5, v.q5, inv_rms);
  put(j6, v.q6, inv_rms);
  put(j7, v.q7, inv_rms);
}

// The rows of workgroup `block` (256 / threads of them), d % 4 != 0. The chunk at `base` is quads
// base + lane + k t (PER = 8 of them).
fn ragged(block: u32, lid: u32) {
  let t = params.threads;
  let lane = lid % t;
  let row = block * (WORKGROUP / t) + lid / t;
  begin = row * params.d;
  end = begin + params.d;
  first = begin / 4u;
  quads = select(0u, (end + 3u) / 4u - first, row < params.rows);
  gamma = select(0u, (row % max(params.groups, 1u)) * params.d, params.groups > 0u);

  if (params.resident != 0u) {
    let v = fetch_quads(0u, lane, t);
    put_quads(v, inverseSqrt(reduce_sum(ragged_squares(v), lid, t) / f32(params.d) + params.eps), 0u, lane, t);
    return;
  }

  let span = PER * t;
  var squares = 0.0;
  for (var base = 0u; base < quads; base += span) {
    squares += ragged_squares(fetch_quads(base, lane, t));
  }
  let inv_rms = inverseSqrt(reduce_sum(squares, lid, t) / f32(params.d) + params.eps);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = (chunk - 1u) * span;
    put_quads(fetch_quads(base, lane, t), inv_rms, base, lane, t);
  }
}
