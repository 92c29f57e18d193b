// The q8 products where a row's scale is +inf or -inf. The kernels sum a times the codes and scale
// each output once, but torch's F.linear(a, codes * scale) sums a[m, k] * (code * scale) term by term:
// with an infinite scale a zero code or a zero a makes a NaN term (0 * inf), and terms of both signs
// make inf - inf, where the scaled sum would be +-inf. So after the walk over K, a column whose scale
// is infinite (found from its bits: a compiler may fold float tests for infinity away) has its
// outputs summed again term by term, here; every other column keeps acc * scale. The check costs a
// few integer operations per quad of columns, outside the k-steps; the sums run only for infinite
// scales. A NaN scale needs nothing: acc * NaN is NaN, as every term is. The accumulators take the
// sums by whole-vector selects (infinite_scale_quad's rows), never by a component index that varies
// at run time: a compiler may move a dynamically indexed vector out of registers, for every tile,
// infinite scales or not.

// Which of four scales are +inf or -inf.
fn infinite(scales: vec4f) -> vec4<bool> {
  return (bitcast<vec4u>(scales) & vec4u(0x7fffffffu)) == vec4u(0x7f800000u);
}

// Outputs (m .. m + 3, n) as torch gives them when row n's scale is infinite:
// sum_k a[m + i, k] * (code[n, k] * scale), one term at a time. Rows past M read zeros (their NaN is
// never stored).
fn infinite_scale_rows(m: u32, n: u32, scale: f32) -> vec4f {
  var sum = vec4f(0.0);
  for (var k = 0u; k < params.k; k++) {
    let code = extractBits(bitcast<i32>(load_word(n, k - k % 4u)), 8u * (k % 4u), 8u);
    let a_k = vec4f(a_at(m, k), a_at(m + 1u, k), a_at(m + 2u, k), a_at(m + 3u, k));
    sum += a_k * (f32(code) * scale);
  }
  return sum;
}

// Outputs (m .. m + 3, n .. n + 3) as torch gives them where infinite (scales' infinite columns; the
// other columns hold zeros, for select to leave alone): row i of the result is output row m + i, as
// the accumulators hold them (four columns an accumulator). Every index is a constant.
fn infinite_scale_quad(m: u32, n: u32, scales: vec4f, infinite: vec4<bool>) -> mat4x4f {
  var c0 = vec4f(0.0);
  var c1 = vec4f(0.0);
  var c2 = vec4f(0.0);
  var c3 = vec4f(0.0);
  if (infinite.x) {
    c0 = infinite_scale_rows(m, n, scales.x);
  }
  if (infinite.y) {
    c1 = infinite_scale_rows(m, n + 1u, scales.y);
  }
  if (infinite.z) {
    c2 = infinite_scale_rows(m, n + 2u, scales.z);
  }
  if (infinite.w) {
    c3 = infinite_scale_rows(m, n + 3u, scales.w);
  }
  return transpose(mat4x4f(c0, c1, c2, c3));
}
