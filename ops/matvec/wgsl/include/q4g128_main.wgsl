// The body of q4g128's main (both variants: they differ in LANES, GROUPS, ROWS, SPAN and the
// workgroup size).
  let row = (wid.x + wid.y * groups.x) * ROWS + 4u * lid.y; // the first of this invocation's rows
  let lane = lid.x;
  let k = params.k;
  let rows = min(vec4u(row) + vec4u(0u, 1u, 2u, 3u), vec4u(params.n - 1u));
  let ngroups = (k + GROUP - 1u) / GROUP;
  var acc = vec4f(0.0); // the four rows
  if (k % 32u == 0u) {
    let chunks = k / 32u;
    for (var i = lane; i < chunks; i += LANES) {
      let q = rows * chunks + i;
      let q0 = weight[q.x];
      let q1 = weight[q.y];
      let q2 = weight[q.z];
      let q3 = weight[q.w];
      let s = scales_at(rows, ngroups, 32u * i);
      x0 = x[8u * i];
      x1 = x[8u * i + 1u];
      x2 = x[8u * i + 2u];
      x3 = x[8u * i + 3u];
      x4 = x[8u * i + 4u];
      x5 = x[8u * i + 5u];
      x6 = x[8u * i + 6u];
      x7 = x[8u * i + 7u];
      acc = fma(s, vec4f(chunk_dot(q0), chunk_dot(q1), chunk_dot(q2), chunk_dot(q3)), acc);
    }
  } else {
    let words = (k + 7u) / 8u;
    let full = k / 8u;
    for (var j = lane; j < full; j += LANES) {
      let d = words_dot(words_at(rows, words, j), x[2u * j], x[2u * j + 1u]);
      acc = fma(scales_at(rows, ngroups, 8u * j), d, acc);
    }
    if (full < words && lane == full % LANES) {
      let left = k % 8u; // columns of the last word inside the row
      let lanes = vec4u(0u, 1u, 2u, 3u);
      let lo = select(vec4f(0.0), x[2u * full], lanes < vec4u(left));
      var hi = vec4f(0.0);
      if (left > 4u) {
        hi = select(vec4f(0.0), x[2u * full + 1u], lanes + 4u < vec4u(left));
      }
      let d = words_dot(words_at(rows, words, full), lo, hi);
      acc = fma(scales_at(rows, ngroups, 8u * full), d, acc);
    }
  }

  let first = lid.y * LANES;
  partial[first + lane] = acc;
// #include "q_reduce.wgsl"
  if (lane == 0u) {
    var s = vec4f(0.0);
    for (var j = 0u; j < 8u; j++) {
      s += partial[first + j * SPAN];
    }
    for (var r = 0u; r < 4u; r++) {
      if (row + r < params.n) {
        y[row + r] = s[r];
      }
    }
  }
