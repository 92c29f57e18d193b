// The body of layernorm's two entry points, `kernel` and `modulated` (every function but the hooks
// below and row_main.wgsl's entry point). Expects of the including kernel: the bindings x, weight,
// bias and out (array<vec4f>), the uniform `params` with rows, d, has_weight, has_bias, eps, threads
// and resident, `const WORKGROUP = 256u`, `const PER = 8u`, and two hooks applied to every
// normalised, weighted and biased value just before it is stored:
// - modulate_quad(row, j, y) -> vec4f: y is quad j of row `row` (d % 4 == 0);
// - modulate_elements(begin, q, mask, y) -> vec4f: y is quad q of x's binding, its components in
//   `mask` belonging to the row whose first element is `begin` (d % 4 != 0).
// `kernel` returns y from both; `modulated` applies its adaLN scale and shift.
// #include "row_sum.wgsl"

// The PER quads of one chunk are the named members of a Quads (row_quads.wgsl), never an array
// indexed in a loop: naga bounds-checks every index of a function-scope array and the driver may keep
// such an array in local memory (spilled through L1/L2); see mod.ts. Named values can stay in registers.
// #include "row_quads.wgsl"

// The row's (count, mean, squared deviations) from an invocation's: the row's mean is the
// count-weighted sum of the invocations' means over d, its squared deviations sum_t (m2_t + n_t *
// (mean_t - mean)^2); returns (the row's mean, 1 / sqrt(its variance + eps)).
fn normaliser(count: f32, mean: f32, deviations: f32, lid: u32, t: u32) -> vec2f {
  let row_mean = reduce_sum(count * mean, lid, t) / f32(params.d);
  let spread = mean - row_mean;
  let row_deviations = reduce_sum(deviations + count * spread * spread, lid, t);
  return vec2f(row_mean, inverseSqrt(row_deviations / f32(params.d) + params.eps));
}


// ---------------------------------------------------------------- d % 4 == 0

// The chunk's quads of x (the row's quads are first .. last), shifted by origin; past the row's end
// the load is clamped to its last quad and the value is 0.
fn x_quads(first: u32, last: u32, quads: u32, origin: f32, base: u32, lane: u32, t: u32) -> Quads {
// #include "row_chunk_quads.wgsl"
  return Quads(
    select(vec4f(0.0), x[min(first + j0, last)] - origin, j0 < quads),
    select(vec4f(0.0), x[min(first + j1, last)] - origin, j1 < quads),
    select(vec4f(0.0), x[min(first + j2, last)] - origin, j2 < quads),
    select(vec4f(0.0), x[min(first + j3, last)] - origin, j3 < quads),
    select(vec4f(0.0), x[min(first + j4, last)] - origin, j4 < quads),
    select(vec4f(0.0), x[min(first + j5, last)] - origin, j5 < quads),
    select(vec4f(0.0), x[min(first + j6, last)] - origin, j6 < quads),
    select(vec4f(0.0), x[min(first + j7, last)] - origin, j7 < quads),
  );
}

// The weight's (with of_bias, the bias's) quads of the chunk, each index clamped to the row's last
// quad; ones (zeros) when there is none.
fn affine_quads(of_bias: bool, quads: u32, base: u32, lane: u32, t: u32) -> Quads {
  let none = vec4f(select(1.0, 0.0, of_bias));
  if (select(params.has_weight, params.has_bias, of_bias) == 0u) {
    return Quads(none, none, none, none, none, none, none, none);
  }
// #include "row_chunk_quads.wgsl"
  return Quads(
    affine_at(of_bias, min(j0, quads - 1u)),
    affine_at(of_bias, min(j1, quads - 1u)),
    affine_at(of_bias, min(j2, quads - 1u)),
    affine_at(of_bias, min(j3, quads - 1u)),
    affine_at(of_bias, min(j4, quads - 1u)),
    affine_at(of_bias, min(j5, quads - 1u)),
    affine_at(of_bias, min(j6, quads - 1u)),
    affine_at(of_bias, min(j7, quads - 1u)),
  );
}

// The chunk's (count, mean, squared deviations from that mean) of its quads v in the row; a chunk
// with nothing of the row gives (0, 0, 0).
fn chunk_stats(v: Quads, quads: u32, base: u32, lane: u32, t: u32) -> vec3f {
// #include "row_chunk_quads.wgsl"
  let count = 4.0 * f32(((select(0u, 1u, j0 < quads) + select(0u, 1u, j1 < quads)) +
                         (select(0u, 1u, j2 < quads) + select(0u, 1u, j3 < quads))) +
                        ((select(0u, 1u, j4 < quads) + select(0u, 1u, j5 < quads)) +
                         (select(0u, 1u, j6 < quads) + select(0u, 1u, j7 < quads))));
  let sum = dot(((v.q0 + v.q1) + (v.q2 + v.q3)) + ((v.q4 + v.q5) + (v.q6 + v.q7)), vec4f(1.0));
  let mean = select(0.0, sum / count, count > 0.0);
  let deviations = ((select(0.0, dot(v.q0 - mean, v.q0 - mean), j0 < quads) + select(0.0, dot(v.q1 - mean, v.q1 - mean), j1 < quads)) +
                    (select(0.0, dot(v.q2 - mean, v.q2 - mean), j2 < quads) + select(0.0, dot(v.q3 - mean, v.q3 - mean), j3 < quads))) +
                   ((select(0.0, dot(v.q4 - mean, v.q4 - mean), j4 < quads) + select(0.0, dot(v.q5 - mean, v.q5 - mean), j5 < quads)) +
                    (select(0.0, dot(v.q6 - mean, v.q6 - mean), j6 < quads) + select(0.0, dot(v.q7 - mean, v.q7 - mean), j7 < quads)));
  return vec3f(count, mean, deviations);
}

// Writes the chunk's quads in the row: (v - row_mean) * rstd * w + b, through modulate_quad.
fn store_quads(row: u32, first: u32, quads: u32, base: u32, lane: u32, t: u32, v: Quads, w: Quads, b: Quads,
               row_mean: f32, rstd: f32) {
// #include "row_chunk_quads.wgsl"
  if (j0 < quads) {
    out[first + j0] = modulate_quad(row, j0, (v.q0 - row_mean) * rstd * w.q0 + b.q0);
  }
  if (j1 < quads) {
    out[first + j1] = modulate_quad(row, j1, (v.q1 - row_mean) * rstd * w.q1 + b.q1);
  }
  if (j2 < quads) {
    out[first + j2] = modulate_quad(row, j2, (v.q2 - row_mean) * rstd * w.q2 + b.q2);
  }
  if (j3 < quads) {
    out[first + j3] = modulate_quad(row, j3, (v.q3 - row_mean) * rstd * w.q3 + b.q3);
  }
  if (j4 < quads) {
    out[first + j4] = modulate_quad(row, j4, (v.q4 - row_mean) * rstd * w.q4 + b.q4);
  }
  if (j5 < quads) {
    out[first + j5] = modulate_quad(row, j5, (v.q5 - row_mean) * rstd * w.q5 + b.q5);
  }
  if (j6 < quads) {
    out[first + j6] = modulate_quad(row, j6, (v.q6 - row_mean) * rstd * w.q6 + b.q6);
  }
  if (j7 < quads) {
    out[first + j7] = modulate_quad(row, j7, (v.q7 - row_mean) * rstd * w.q7 + b.q7);
  }
}

// Row `row` held in registers; lane `lane` of its t invocations. Past the row's end a value is 0
// and counts for nothing. The weight and bias are loaded with x, before the reductions.
fn resident_aligned(row: u32, lane: u32, lid: u32, t: u32) {
  let quads = params.d / 4u;
  let first = min(row, params.rows - 1u) * quads;
  let last = first + quads - 1u;
  let origin = x[first].x;
  let v = x_quads(first, last, quads, origin, 0u, lane, t);
  let w = affine_quads(false, quads, 0u, lane, t);
  let b = affine_quads(true, quads, 0u, lane, t);
  // One chunk: its (count, mean, squared deviations) are the invocation's.
  let stats = chunk_stats(v, quads, 0u, lane, t);
  let n = normaliser(stats.x, stats.y, stats.z, lid, t);
  if (row < params.rows) {
    store_quads(row, first, quads, 0u, lane, t, v, w, b, n.x, n.y);
  }
}

// Row `row` streamed in chunks of PER * t quads; lane `lane` of its t invocations. The second pass
// reads x, weight and bias together.
fn streamed_aligned(row: u32, lane: u32, lid: u32, t: u32) {
  let quads = params.d / 4u;
  let first = min(row, params.rows - 1u) * quads;
  let last = first + quads - 1u;
  let origin = x[first].x;
  let span = PER * t;
  var count = 0.0;        // elements this invocation has seen
  var mean = 0.0;         // their mean (shifted)
  var deviations = 0.0;   // their sum of squared deviations from `mean`
  // base + lane < quads, so every chunk holds at least one quad of the row.
  for (var base = 0u; base + lane < quads; base += span) {
    let chunk = chunk_stats(x_quads(first, last, quads, origin, base, lane, t), quads, base, lane, t);
    // Chan et al.: merge the chunk's (count, mean, squared deviations) into the running triple.
    let total = count + chunk.x;
    let delta = chunk.y - mean;
    mean += delta * (chunk.x / total);
    deviations += chunk.z + delta * delta * count * (chunk.x / total);
    count = total;
  }
  let n = normaliser(count, mean, deviations, lid, t);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = (chunk - 1u) * span;
    let v = x_quads(first, last, quads, origin, base, lane, t);
    let w = affine_quads(false, quads, base, lane, t);
    let b = affine_quads(true, quads, base, lane, t);
    if (row < params.rows) {
      store_quads(row, first, quads, base, lane, t, v, w, b, n.x, n.y);
    }
  }
}

// ---------------------------------------------------------------- d % 4 != 0

// #include "row_inside.wgsl"

fn affine_at(of_bias: bool, i: u32) -> vec4f {
  if (of_bias) {
    return bias[i];
  }
  return weight[i];
}

// The weight (or, with of_bias, the bias) of quad q's components, one load per component in the
// row: the row starts off a quad boundary, so its quads do not line up with the weight's (u32
// arithmetic wraps, so i + c is exact).
fn affine(of_bias: bool, q: u32, mask: vec4<bool>) -> vec4f {
  let i = 4u * q - begin;
  var w = vec4f(0.0);
  if (mask.x) {
    w.x = affine_at(of_bias, i / 4u)[i % 4u];
  }
  if (mask.y) {
    w.y = affine_at(of_bias, (i + 1u) / 4u)[(i + 1u) % 4u];
  }
  if (mask.z) {
    w.z = affine_at(of_bias, (i + 2u) / 4u)[(i + 2u) % 4u];
  }
  if (mask.w) {
    w.w = affine_at(of_bias, (i + 3u) / 4u)[(i + 3u) % 4u];
  }
  return w;
}

// #include "row_store.wgsl"

// This invocation's row, set once at the start of `ragged`: its quads are first .. first + quads - 1,
// its elements begin .. end - 1 (quads = 0 for a row past the end); origin is its first element.
var<private> first: u32;
var<private> quads: u32;
var<private> begin: u32;
var<private> end: u32;
var<private> origin: f32;

// Which components of the row's quad j belong to the row (none when j is past its last quad).
fn keep(j: u32) -> vec4<bool> {
  return inside(first + j, begin, end) & vec4<bool>(j < quads);
}

// The row's quad j shifted, with 0 in the components outside the row (all four past its last quad).
fn fetch(j: u32) -> vec4f {
  var v = vec4f(0.0);
  if (j < quads) {
    v = select(v, x[first + j] - origin, inside(first + j, begin, end));
  }
  return v;
}

// How many of the row's quad j's components belong to the row.
fn count_in(j: u32) -> f32 {
  return dot(select(vec4f(0.0), vec4f(1.0), keep(j)), vec4f(1.0));
}

// The squared deviations from m of the components of the row's quad j (v, shifted) in the row.
fn deviations_in(j: u32, v: vec4f, m: f32) -> f32 {
  let dev = select(vec4f(0.0), v - m, keep(j));
  return dot(dev, dev);
}

// Writes the normalised v (a shifted quad), times weight plus bias, as the row's quad j, if any.
fn put(j: u32, v: vec4f, row_mean: f32, rstd: f32) {
  if (j < quads) {
    let mask = inside(first + j, begin, end);
    var y = (v - row_mean) * rstd;
    if (params.has_weight != 0u) {
      y *= affine(false, first + j, mask);
    }
    if (params.has_bias != 0u) {
      y += affine(true, first + j, mask);
    }
    store(first + j, modulate_elements(begin, first + j, mask, y), mask);
  }
}

// The count and the sum of the components of the chunk's quads v (from fetch_quads) in the row.
fn count_sum(v: Quads, base: u32, lane: u32, t: u32) -> vec2f {
// #include "row_chunk_quads.wgsl"
  let one = vec4f(1.0);
  let count = count_in(j0) + count_in(j1) + count_in(j2) + count_in(j3) +
              count_in(j4) + count_in(j5) + count_in(j6) + count_in(j7);
  let sum = dot(v.q0, one) + dot(v.q1, one) + dot(v.q2, one) + dot(v.q3, one) +
            dot(v.q4, one) + dot(v.q5, one) + dot(v.q6, one) + dot(v.q7, one);
  return vec2f(count, sum);
}

// The squared deviations from m of the components of the chunk's quads v in the row.
fn deviations_of(v: Quads, m: f32, base: u32, lane: u32, t: u32) -> f32 {
// #include "row_chunk_quads.wgsl"
  return deviations_in(j0, v.q0, m) + deviations_in(j1, v.q1, m) +
         deviations_in(j2, v.q2, m) + deviations_in(j3, v.q3, m) +
         deviations_in(j4, v.q4, m) + deviations_in(j5, v.q5, m) +
         deviations_in(j6, v.q6, m) + deviations_in(j7, v.q7, m);
}

// Writes the chunk's quads v normalised (put).
fn put_quads(v: Quads, row_mean: f32, rstd: f32, base: u32, lane: u32, t: u32) {
// #include "row_chunk_quads.wgsl"
  put(j0, v.q0, row_mean, rstd);
  put(j1, v.q1, row_mean, rstd);
  put(j2, v.q2, row_mean, rstd);
  put(j3, v.q3, row_mean, rstd);
  put(j4, v.q4, row_mean, rstd);
  put(j5, v.q5, row_mean, rstd);
  put(j6, v.q6, row_mean, rstd);
  put(j7, v.q7, row_mean, rstd);
}

// The rows of workgroup `block` (256 / threads of them), d % 4 != 0. The chunk at `base` is quads
// base + lane + k t (PER = 8 of them).
fn ragged(block: u32, lid: u32) {
  let t = params.threads;
  let lane = lid % t;
  let row = block * (WORKGROUP / t) + lid / t;
  let live = row < params.rows;
  begin = row * params.d;
  end = begin + params.d;
  first = begin / 4u;
  quads = select(0u, (end + 3u) / 4u - first, live);
  origin = 0.0;
  if (live) {
    origin = x[first][begin % 4u];
  }

  if (params.resident != 0u) {
    let v = fetch_quads(0u, lane, t);
    // One chunk: its (count, mean, squared deviations) are the invocation's; an invocation with
    // nothing of the row (lane >= quads) keeps (0, 0, 0).
    let cs = count_sum(v, 0u, lane, t);
    let mean = select(0.0, cs.y / cs.x, cs.x > 0.0);
    let n = normaliser(cs.x, mean, deviations_of(v, mean, 0u, lane, t), lid, t);
    put_quads(v, n.x, n.y, 0u, lane, t);
    return;
  }

  let span = PER * t;
  var count = 0.0;        // elements this invocation has seen
  var mean = 0.0;         // their mean (shifted)
  var deviations = 0.0;   // their sum of squared deviations from `mean`
  // base + lane < quads, so every chunk holds at least one element of the row.
  for (var base = 0u; base + lane < quads; base += span) {
    let v = fetch_quads(base, lane, t);
    let cs = count_sum(v, base, lane, t);
    let chunk_mean = cs.y / cs.x;
    let chunk_deviations = deviations_of(v, chunk_mean, base, lane, t);
    // Chan et al.: merge (chunk count, chunk_mean, chunk_deviations) into the running triple.
    let total = count + cs.x;
    let delta = chunk_mean - mean;
    mean += delta * (cs.x / total);
    deviations += chunk_deviations + delta * delta * count * (cs.x / total);
    count = total;
  }
  let n = normaliser(count, mean, deviations, lid, t);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = (chunk - 1u) * span;
    put_quads(fetch_quads(base, lane, t), n.x, n.y, base, lane, t);
  }
}
