// The body of q8row's main (both variants: they differ in LANES, GROUPS, ROWS, SPAN and the
// workgroup size).
  let row = (wid.x + wid.y * groups.x) * ROWS + 4u * lid.y; // the first of this invocation's rows
  let lane = lid.x;
  let k = params.k;
  let rows = min(vec4u(row) + vec4u(0u, 1u, 2u, 3u), vec4u(params.n - 1u));
  if (k % 16u == 0u) {
    let chunks = k / 16u;
    for (var i = lane; i < chunks; i += LANES) {
      let q = rows * chunks + i;
      let xi = 4u * i;
      chunk(weight[q.x], weight[q.y], weight[q.z], weight[q.w], x[xi], x[xi + 1u], x[xi + 2u], x[xi + 3u]);
    }
  } else {
    let words = (k + 3u) / 4u;
    let full = k / 4u;
    for (var j = lane; j < full; j += LANES) {
      word4(words_at(rows, words, j), x[j]);
    }
    if (full < words && lane == full % LANES) {
      let live = vec4u(0u, 1u, 2u, 3u) < vec4u(k % 4u);
      word4(words_at(rows, words, full), select(vec4f(0.0), x[full], live));
    }
  }

  let first = lid.y * LANES;
  partial[first + lane] = sums();
// #include "q_reduce.wgsl"
  if (lane == 0u) {
    var s = vec4f(0.0);
    for (var j = 0u; j < 8u; j++) {
      s += partial[first + j * SPAN];
    }
    for (var r = 0u; r < 4u; r++) {
      if (row + r < params.n) {
        y[row + r] = scale[row + r] * s[r];
      }
    }
  }
