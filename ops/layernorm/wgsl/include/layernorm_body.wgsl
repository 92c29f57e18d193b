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

// The PER quads of one chunk are written out by hand as v0 .. v7, never as an array indexed in a
// loop: naga bounds-checks every index of a function-scope array and the driver may keep such an
// array in local memory (spilled through L1/L2); see mod.ts. Named values can stay in registers.

// ---------------------------------------------------------------- d % 4 == 0

// Row `row` held in registers; lane `lane` of its t invocations. Past the row's end a value is 0
// and counts for nothing.
fn resident_aligned(row: u32, lane: u32, lid: u32, t: u32) {
  let quads = params.d / 4u;
  let live = row < params.rows;
  let first = min(row, params.rows - 1u) * quads;
  let last = first + quads - 1u;
  let origin = x[first].x;
  let j0 = lane;
  let j1 = lane + t;
  let j2 = lane + 2u * t;
  let j3 = lane + 3u * t;
  let j4 = lane + 4u * t;
  let j5 = lane + 5u * t;
  let j6 = lane + 6u * t;
  let j7 = lane + 7u * t;
  let v0 = select(vec4f(0.0), x[min(first + j0, last)] - origin, j0 < quads);
  let v1 = select(vec4f(0.0), x[min(first + j1, last)] - origin, j1 < quads);
  let v2 = select(vec4f(0.0), x[min(first + j2, last)] - origin, j2 < quads);
  let v3 = select(vec4f(0.0), x[min(first + j3, last)] - origin, j3 < quads);
  let v4 = select(vec4f(0.0), x[min(first + j4, last)] - origin, j4 < quads);
  let v5 = select(vec4f(0.0), x[min(first + j5, last)] - origin, j5 < quads);
  let v6 = select(vec4f(0.0), x[min(first + j6, last)] - origin, j6 < quads);
  let v7 = select(vec4f(0.0), x[min(first + j7, last)] - origin, j7 < quads);
  var w0 = vec4f(1.0);
  var w1 = vec4f(1.0);
  var w2 = vec4f(1.0);
  var w3 = vec4f(1.0);
  var w4 = vec4f(1.0);
  var w5 = vec4f(1.0);
  var w6 = vec4f(1.0);
  var w7 = vec4f(1.0);
  if (params.has_weight != 0u) {
    w0 = weight[min(j0, quads - 1u)];
    w1 = weight[min(j1, quads - 1u)];
    w2 = weight[min(j2, quads - 1u)];
    w3 = weight[min(j3, quads - 1u)];
    w4 = weight[min(j4, quads - 1u)];
    w5 = weight[min(j5, quads - 1u)];
    w6 = weight[min(j6, quads - 1u)];
    w7 = weight[min(j7, quads - 1u)];
  }
  var b0 = vec4f(0.0);
  var b1 = vec4f(0.0);
  var b2 = vec4f(0.0);
  var b3 = vec4f(0.0);
  var b4 = vec4f(0.0);
  var b5 = vec4f(0.0);
  var b6 = vec4f(0.0);
  var b7 = vec4f(0.0);
  if (params.has_bias != 0u) {
    b0 = bias[min(j0, quads - 1u)];
    b1 = bias[min(j1, quads - 1u)];
    b2 = bias[min(j2, quads - 1u)];
    b3 = bias[min(j3, quads - 1u)];
    b4 = bias[min(j4, quads - 1u)];
    b5 = bias[min(j5, quads - 1u)];
    b6 = bias[min(j6, quads - 1u)];
    b7 = bias[min(j7, quads - 1u)];
  }
  // One chunk: its (count, mean, squared deviations) are the invocation's; an invocation with
  // nothing of the row (lane >= quads) keeps (0, 0, 0).
  let count = 4.0 * f32(((select(0u, 1u, j0 < quads) + select(0u, 1u, j1 < quads)) +
                         (select(0u, 1u, j2 < quads) + select(0u, 1u, j3 < quads))) +
                        ((select(0u, 1u, j4 < quads) + select(0u, 1u, j5 < quads)) +
                         (select(0u, 1u, j6 < quads) + select(0u, 1u, j7 < quads))));
  let sum = dot(((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7)), vec4f(1.0));
  let mean = select(0.0, sum / count, count > 0.0);
  let deviations = ((select(0.0, dot(v0 - mean, v0 - mean), j0 < quads) + select(0.0, dot(v1 - mean, v1 - mean), j1 < quads)) +
                    (select(0.0, dot(v2 - mean, v2 - mean), j2 < quads) + select(0.0, dot(v3 - mean, v3 - mean), j3 < quads))) +
                   ((select(0.0, dot(v4 - mean, v4 - mean), j4 < quads) + select(0.0, dot(v5 - mean, v5 - mean), j5 < quads)) +
                    (select(0.0, dot(v6 - mean, v6 - mean), j6 < quads) + select(0.0, dot(v7 - mean, v7 - mean), j7 < quads)));
  let row_mean = reduce_sum(count * mean, lid, t) / f32(params.d);
  let spread = mean - row_mean;
  let row_deviations = reduce_sum(deviations + count * spread * spread, lid, t);
  let rstd = inverseSqrt(row_deviations / f32(params.d) + params.eps);
  if (live) {
    if (j0 < quads) {
      out[first + j0] = modulate_quad(row, j0, (v0 - row_mean) * rstd * w0 + b0);
    }
    if (j1 < quads) {
      out[first + j1] = modulate_quad(row, j1, (v1 - row_mean) * rstd * w1 + b1);
    }
    if (j2 < quads) {
      out[first + j2] = modulate_quad(row, j2, (v2 - row_mean) * rstd * w2 + b2);
    }
    if (j3 < quads) {
      out[first + j3] = modulate_quad(row, j3, (v3 - row_mean) * rstd * w3 + b3);
    }
    if (j4 < quads) {
      out[first + j4] = modulate_quad(row, j4, (v4 - row_mean) * rstd * w4 + b4);
    }
    if (j5 < quads) {
      out[first + j5] = modulate_quad(row, j5, (v5 - row_mean) * rstd * w5 + b5);
    }
    if (j6 < quads) {
      out[first + j6] = modulate_quad(row, j6, (v6 - row_mean) * rstd * w6 + b6);
    }
    if (j7 < quads) {
      out[first + j7] = modulate_quad(row, j7, (v7 - row_mean) * rstd * w7 + b7);
    }
  }
}

// Row `row` streamed in chunks of PER * t quads; lane `lane` of its t invocations. The second pass
// reads x, weight and bias together.
fn streamed_aligned(row: u32, lane: u32, lid: u32, t: u32) {
  let quads = params.d / 4u;
  let live = row < params.rows;
  let first = min(row, params.rows - 1u) * quads;
  let last = first + quads - 1u;
  let origin = x[first].x;
  let span = PER * t;
  var count = 0.0;        // elements this invocation has seen
  var mean = 0.0;         // their mean (shifted)
  var deviations = 0.0;   // their sum of squared deviations from `mean`
  // base + lane < quads, so every chunk holds at least one quad of the row.
  for (var base = 0u; base + lane < quads; base += span) {
// #include "row_chunk_quads.wgsl"
    let v0 = select(vec4f(0.0), x[min(first + j0, last)] - origin, j0 < quads);
    let v1 = select(vec4f(0.0), x[min(first + j1, last)] - origin, j1 < quads);
    let v2 = select(vec4f(0.0), x[min(first + j2, last)] - origin, j2 < quads);
    let v3 = select(vec4f(0.0), x[min(first + j3, last)] - origin, j3 < quads);
    let v4 = select(vec4f(0.0), x[min(first + j4, last)] - origin, j4 < quads);
    let v5 = select(vec4f(0.0), x[min(first + j5, last)] - origin, j5 < quads);
    let v6 = select(vec4f(0.0), x[min(first + j6, last)] - origin, j6 < quads);
    let v7 = select(vec4f(0.0), x[min(first + j7, last)] - origin, j7 < quads);
    let chunk_count = 4.0 * f32(((select(0u, 1u, j0 < quads) + select(0u, 1u, j1 < quads)) +
                                 (select(0u, 1u, j2 < quads) + select(0u, 1u, j3 < quads))) +
                                ((select(0u, 1u, j4 < quads) + select(0u, 1u, j5 < quads)) +
                                 (select(0u, 1u, j6 < quads) + select(0u, 1u, j7 < quads))));
    let chunk_sum = dot(((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7)), vec4f(1.0));
    let chunk_mean = select(0.0, chunk_sum / chunk_count, chunk_count > 0.0);
    let chunk_deviations = ((select(0.0, dot(v0 - chunk_mean, v0 - chunk_mean), j0 < quads) + select(0.0, dot(v1 - chunk_mean, v1 - chunk_mean), j1 < quads)) +
                            (select(0.0, dot(v2 - chunk_mean, v2 - chunk_mean), j2 < quads) + select(0.0, dot(v3 - chunk_mean, v3 - chunk_mean), j3 < quads))) +
                           ((select(0.0, dot(v4 - chunk_mean, v4 - chunk_mean), j4 < quads) + select(0.0, dot(v5 - chunk_mean, v5 - chunk_mean), j5 < quads)) +
                            (select(0.0, dot(v6 - chunk_mean, v6 - chunk_mean), j6 < quads) + select(0.0, dot(v7 - chunk_mean, v7 - chunk_mean), j7 < quads)));
    // Chan et al.: merge (chunk_count, chunk_mean, chunk_deviations) into the running triple.
    let total = count + chunk_count;
    let delta = chunk_mean - mean;
    mean += delta * (chunk_count / total);
    deviations += chunk_deviations + delta * delta * count * (chunk_count / total);
    count = total;
  }
  let row_mean = reduce_sum(count * mean, lid, t) / f32(params.d);
  let spread = mean - row_mean;
  let row_deviations = reduce_sum(deviations + count * spread * spread, lid, t);
  let rstd = inverseSqrt(row_deviations / f32(params.d) + params.eps);
  // Last chunk first: the chunks read last above are the likeliest still in L2.
  for (var chunk = (quads + span - 1u) / span; chunk > 0u; chunk--) {
    let base = (chunk - 1u) * span;
// #include "row_chunk_quads.wgsl"
    let v0 = select(vec4f(0.0), x[min(first + j0, last)] - origin, j0 < quads);
    let v1 = select(vec4f(0.0), x[min(first + j1, last)] - origin, j1 < quads);
    let v2 = select(vec4f(0.0), x[min(first + j2, last)] - origin, j2 < quads);
    let v3 = select(vec4f(0.0), x[min(first + j3, last)] - origin, j3 < quads);
    let v4 = select(vec4f(0.0), x[min(first + j4, last)] - origin, j4 < quads);
    let v5 = select(vec4f(0.0), x[min(first + j5, last)] - origin, j5 < quads);
    let v6 = select(vec4f(0.0), x[min(first + j6, last)] - origin, j6 < quads);
    let v7 = select(vec4f(0.0), x[min(first + j7, last)] - origin, j7 < quads);
    var w0 = vec4f(1.0);
    var w1 = vec4f(1.0);
    var w2 = vec4f(1.0);
    var w3 = vec4f(1.0);
    var w4 = vec4f(1.0);
    var w5 = vec4f(1.0);
    var w6 = vec4f(1.0);
    var w7 = vec4f(1.0);
    if (params.has_weight != 0u) {
      w0 = weight[min(j0, quads - 1u)];
      w1 = weight[min(j1, quads - 1u)];
      w2 = weight[min(j2, quads - 1u)];
      w3 = weight[min(j3, quads - 1u)];
      w4 = weight[min(j4, quads - 1u)];
      w5 = weight[min(j5, quads - 1u)];
      w6 = weight[min(j6, quads - 1u)];
      w7 = weight[min(j7, quads - 1u)];
    }
    var b0 = vec4f(0.0);
    var b1 = vec4f(0.0);
    var b2 = vec4f(0.0);
    var b3 = vec4f(0.0);
    var b4 = vec4f(0.0);
    var b5 = vec4f(0.0);
    var b6 = vec4f(0.0);
    var b7 = vec4f(0.0);
    if (params.has_bias != 0u) {
      b0 = bias[min(j0, quads - 1u)];
      b1 = bias[min(j1, quads - 1u)];
      b2 = bias[min(j2, quads - 1u)];
      b3 = bias[min(j3, quads - 1u)];
      b4 = bias[min(j4, quads - 1u)];
      b5 = bias[min(j5, quads - 1u)];
      b6 = bias[min(j6, quads - 1u)];
      b7 = bias[min(j7, quads - 1u)];
    }
    if (live) {
      if (j0 < quads) {
        out[first + j0] = modulate_quad(row, j0, (v0 - row_mean) * rstd * w0 + b0);
      }
      if (j1 < quads) {
        out[first + j1] = modulate_quad(row, j1, (v1 - row_mean) * rstd * w1 + b1);
      }
      if (j2 < quads) {
        out[first + j2] = modulate_quad(row, j2, (v2 - row_mean) * rstd * w2 + b2);
      }
      if (j3 < quads) {
        out[first + j3] = modulate_quad(row, j3, (v3 - row_mean) * rstd * w3 + b3);
      }
      if (j4 < quads) {
        out[first + j4] = modulate_quad(row, j4, (v4 - row_mean) * rstd * w4 + b4);
      }
      if (j5 < quads) {
        out[first + j5] = modulate_quad(row, j5, (v5 - row_mean) * rstd * w5 + b5);
      }
      if (j6 < quads) {
        out[first + j6] = modulate_quad(row, j6, (v6 - row_mean) * rstd * w6 + b6);
      }
      if (j7 < quads) {
        out[first + j7] = modulate_quad(row, j7, (v7 - row_mean) * rstd * w7 + b7);
      }
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

// The rows of workgroup `block` (256 / threads of them), d % 4 != 0.
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
  // Quad k of this invocation's chunk at `base` is base + k * t (PER = 8 of them).
  let j0 = lane;
  let j1 = lane + t;
  let j2 = lane + 2u * t;
  let j3 = lane + 3u * t;
  let j4 = lane + 4u * t;
  let j5 = lane + 5u * t;
  let j6 = lane + 6u * t;
  let j7 = lane + 7u * t;
  let one = vec4f(1.0);

  if (params.resident != 0u) {
    let v0 = fetch(j0);
    let v1 = fetch(j1);
    let v2 = fetch(j2);
    let v3 = fetch(j3);
    let v4 = fetch(j4);
    let v5 = fetch(j5);
    let v6 = fetch(j6);
    let v7 = fetch(j7);
    // One chunk: its (count, mean, squared deviations) are the invocation's; an invocation with
    // nothing of the row (lane >= quads) keeps (0, 0, 0).
    let count = count_in(j0) + count_in(j1) + count_in(j2) + count_in(j3) +
                count_in(j4) + count_in(j5) + count_in(j6) + count_in(j7);
    let sum = dot(v0, one) + dot(v1, one) + dot(v2, one) + dot(v3, one) +
              dot(v4, one) + dot(v5, one) + dot(v6, one) + dot(v7, one);
    let mean = select(0.0, sum / count, count > 0.0);
    let deviations = deviations_in(j0, v0, mean) + deviations_in(j1, v1, mean) +
                     deviations_in(j2, v2, mean) + deviations_in(j3, v3, mean) +
                     deviations_in(j4, v4, mean) + deviations_in(j5, v5, mean) +
                     deviations_in(j6, v6, mean) + deviations_in(j7, v7, mean);
    let row_mean = reduce_sum(count * mean, lid, t) / f32(params.d);
    let spread = mean - row_mean;
    let row_deviations = reduce_sum(deviations + count * spread * spread, lid, t);
    let rstd = inverseSqrt(row_deviations / f32(params.d) + params.eps);
    put(j0, v0, row_mean, rstd);
    put(j1, v1, row_mean, rstd);
    put(j2, v2, row_mean, rstd);
    put(j3, v3, row_mean, rstd);
    put(j4, v4, row_mean, rstd);
    put(j5, v5, row_mean, rstd);
    put(j6, v6, row_mean, rstd);
    put(j7, v7, row_mean, rstd);
    return;
  }

  let span = PER * t;
  var count = 0.0;        // elements this invocation has seen
  var mean = 0.0;         // their mean (shifted)
  var deviations = 0.0;   // their sum of squared deviations from `mean`
  // base + j0 < quads, so every chunk holds at least one element of the row.
  for (var base = 0u; base + j0 < quads; base += span) {
    let v0 = fetch(base + j0);
    let v1 = fetch(base + j1);
    let v2 = fetch(base + j2);
    let v3 = fetch(base + j3);
    let v4 = fetch(base + j4);
    let v5 = fetch(base + j5);
    let v6 = fetch(base + j6);
    let v7 = fetch(base + j7);
    let chunk_count = count_in(base + j0) + count_in(base + j1) + count_in(base + j2) + count_in(base + j3) +
                      count_in(base + j4) + count_in(base + j5) + count_in(base + j6) + count_in(base + j7);
    let chunk_sum = dot(v0, one) + dot(v1, one) + dot(v2, one) + dot(v3, one) +
                    dot(v4, one) + dot(v5, one) + dot(v6, one) + dot(v7, one);
    let chunk_mean = chunk_sum / chunk_count;
    let chunk_deviations = deviations_in(base + j0, v0, chunk_mean) + deviations_in(base + j1, v1, chunk_mean) +
                           deviations_in(base + j2, v2, chunk_mean) + deviations_in(base + j3, v3, chunk_mean) +
                           deviations_in(base + j4, v4, chunk_mean) + deviations_in(base + j5, v5, chunk_mean) +
                           deviations_in(base + j6, v6, chunk_mean) + deviations_in(base + j7, v7, chunk_mean);
    // Chan et al.: merge (chunk_count, chunk_mean, chunk_deviations) into the running triple.
    let total = count + chunk_count;
    let delta = chunk_mean - mean;
    mean += delta * (chunk_count / total);
    deviations += chunk_deviations + delta * delta * count * (chunk_count / total);
    count = total;
  }
  let row_mean = reduce_sum(count * mean, lid, t) / f32(params.d);
  let spread = mean - row_mean;
  let row_deviations = reduce_sum(deviations + count * spread * spread, lid, t);
  let rstd = inverseSqrt(row_deviations / f32(params.d) + params.eps);
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
    put(base + j0, v0, row_mean, rstd);
    put(base + j1, v1, row_mean, rstd);
    put(base + j2, v2, row_mean, rstd);
    put(base + j3, v3, row_mean, rstd);
    put(base + j4, v4, row_mean, rstd);
    put(base + j5, v5, row_mean, rstd);
    put(base + j6, v6, row_mean, rstd);
    put(base + j7, v7, row_mean, rstd);
  }
}
