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
  let inv_rms = inverseSqrt(reduce_sum(squares, lid, t) / f32(params.d) + params.eps);
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
      out[first + j0] = modulate_quad(r, j0, v0 * (inv_rms * w0));
    }
    if (j1 < quads) {
      out[first + j1] = modulate_quad(r, j1, v1 * (inv_rms * w1));
    }
    if (j2 < quads) {
      out[first + j2] = modulate_quad(r, j2, v2 * (inv_rms * w2));
    }
    if (j3 < quads) {
      out[first + j3] = modulate_quad(r, j3, v3 * (inv_rms * w3));
    }
    if (j4 < quads) {
      out[first + j4] = modulate_quad(r, j4, v4 * (inv_rms * w4));
    }
    if (j5 < quads) {
      out[first + j5] = modulate_quad(r, j5, v5 * (inv_rms * w5));
    }
    if (j6 < quads) {
      out[first + j6] = modulate_quad(r, j6, v6 * (inv_rms * w6));
    }
    if (j7 < quads) {
      out[first + j7] = modulate_quad(r, j7, v7 * (inv_rms * w7));
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
  let inv_rms = inverseSqrt(reduce_sum(squares, lid, t) / f32(params.d) + params.eps);
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
        out[first + j0] = modulate_quad(r, j0, v0 * (inv_rms * w0));
      }
      if (j1 < quads) {
        out[first + j1] = modulate_quad(r, j1, v1 * (inv_rms * w1));
      }
      if (j2 < quads) {
        out[first + j2] = modulate_quad(r, j2, v2 * (inv_rms * w2));
      }
      if (j3 < quads) {
        out[first + j3] = modulate_quad(r, j3, v3 * (inv_rms * w3));
      }
      if (j4 < quads) {
        out[first + j4] = modulate_quad(r, j4, v4 * (inv_rms * w4));
      }
      if (j5 < quads) {
        out[first + j5] = modulate_quad(r, j5, v5 * (inv_rms * w5));
      }
      if (j6 < quads) {
        out[first + j6] = modulate_quad(r, j6, v6 * (inv_rms * w6));
      }
      if (j7 < quads) {
        out[first + j7] = modulate_quad(r, j7, v7 * (inv_rms * w7));
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

// Writes v * inv_rms * weight (through modulate_elements) as the row's quad j, if the row has one.
fn put(j: u32, v: vec4f, inv_rms: f32) {
  if (j < quads) {
    let mask = inside(first + j, begin, end);
    store(first + j, modulate_elements(begin, first + j, mask, v * (inv_rms * weights(first + j, mask))), mask);
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
    let inv_rms = inverseSqrt(reduce_sum(squares, lid, t) / f32(params.d) + params.eps);
    put(j0, v0, inv_rms);
    put(j1, v1, inv_rms);
    put(j2, v2, inv_rms);
    put(j3, v3, inv_rms);
    put(j4, v4, inv_rms);
    put(j5, v5, inv_rms);
    put(j6, v6, inv_rms);
    put(j7, v7, inv_rms);
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
  let inv_rms = inverseSqrt(reduce_sum(squares, lid, t) / f32(params.d) + params.eps);
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
    put(base + j0, v0, inv_rms);
    put(base + j1, v1, inv_rms);
    put(base + j2, v2, inv_rms);
    put(base + j3, v3, inv_rms);
    put(base + j4, v4, inv_rms);
    put(base + j5, v5, inv_rms);
    put(base + j6, v6, inv_rms);
    put(base + j7, v7, inv_rms);
  }
}
