// The quantized rows whose scaled sum is +inf or -inf. The kernels scale a sum of codes times x (q8:
// the row's sum once; q4: each chunk's sum by its group's scale), but torch's mv of the dequantized
// weight sums x[k] * (code * scale) term by term: a zero code times an infinite scale, or infinite
// terms of both signs, make that NaN where the scaled sum is +-inf. A finite or NaN scaled sum is
// already torch's answer, so only a row whose result is infinite (a test of its bits, once per row
// at the store, outside the walk over K) is summed again here, term by term.

// Whether v is +inf or -inf, from its bits (a compiler may fold a float test for infinity away).
fn is_infinite(v: f32) -> bool {
  return (bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u;
}

// Word j of row n's `words` words.
fn word_of(n: u32, words: u32, j: u32) -> u32 {
  let e = n * words + j;
  return weight[e / 4u][e % 4u];
}

// x[k].
fn x_at(k: u32) -> f32 {
  return x[k / 4u][k % 4u];
}

// Row n of a q8 weight, term by term: sum_k x[k] * (code[n, k] * scales[n]).
fn q8_terms(n: u32) -> f32 {
  let words = (params.k + 3u) / 4u;
  let scale = scales[n];
  var sum = 0.0;
  for (var k = 0u; k < params.k; k++) {
    let code = extractBits(bitcast<i32>(word_of(n, words, k / 4u)), 8u * (k % 4u), 8u);
    sum += x_at(k) * (f32(code) * scale);
  }
  return sum;
}

// Row n of a q4g128 weight, term by term: sum_k x[k] * (code[n, k] * scales[n, k / 128]).
fn q4_terms(n: u32) -> f32 {
  let words = (params.k + 7u) / 8u;
  let groups = (params.k + 127u) / 128u;
  var sum = 0.0;
  for (var k = 0u; k < params.k; k++) {
    let code = extractBits(bitcast<i32>(word_of(n, words, k / 8u)), 4u * (k % 8u), 4u);
    sum += x_at(k) * (f32(code) * scales[n * groups + k / 128u]);
  }
  return sum;
}

// Row n's result: the kernel's, or torch's term-by-term sum where the kernel's is infinite.
fn q8_row_result(n: u32, v: f32) -> f32 {
  if (is_infinite(v)) {
    return q8_terms(n);
  }
  return v;
}

fn q4_row_result(n: u32, v: f32) -> f32 {
  if (is_infinite(v)) {
    return q4_terms(n);
  }
  return v;
}
