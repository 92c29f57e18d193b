// GELU on vec4s, exact and tanh-approximated, as torch.nn.functional.gelu with approximate="none"
// and "tanh": gelu(x) = x * Phi(x) = x/2 * (1 + erf(x / sqrt 2)), gelu_tanh(x) = x/2 * (1 +
// tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3). Shared by matmul's fused epilogues; the including
// kernel also includes silu.wgsl, whose sigmoid gelu_tanh calls.
//
// Both are formed so that nothing cancels or overflows for any finite x: Phi(x) as erfc(-x /
// sqrt 2) / 2, erfc taken only of a non-negative argument (at most 20 / sqrt 2, where Phi is
// already 0 or 1 in f32); (1 + tanh(u)) / 2 as sigmoid(2u), x clamped to [-20, 20] before it is
// cubed (the sigmoid is 0 or 1 in f32 beyond). WGSL lets a compiler assume that no NaN reaches
// min() or clamp() (min(NaN, 20) may be 20), so a NaN input is recognised from its bits and passed
// through, as torch passes it.
const SQRT_2_OVER_PI: f32 = 0.7978845608028654;
const INV_SQRT_2: f32 = 0.7071067811865476;

// erfc(z) for z >= 0 with relative error below 1.2e-7 (a Chebyshev-fitted exponent of t = 1/(1 + z/2)).
fn erfc_nonnegative(z: vec4f) -> vec4f {
  let t = 1.0 / (1.0 + 0.5 * z);
  let p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return t * exp(p - z * z);
}

// r where v is a number, v (NaN) where it is NaN.
fn keep_nan(v: vec4f, r: vec4f) -> vec4f {
  return select(r, v, (bitcast<vec4u>(v) & vec4u(0x7fffffffu)) > vec4u(0x7f800000u));
}

fn gelu(v: vec4f) -> vec4f {
  let half_tail = 0.5 * erfc_nonnegative(min(abs(v), vec4f(20.0)) * INV_SQRT_2);
  return keep_nan(v, v * select(half_tail, 1.0 - half_tail, v >= vec4f(0.0)));
}

fn gelu_tanh(v: vec4f) -> vec4f {
  let c = clamp(v, vec4f(-20.0), vec4f(20.0));
  return keep_nan(v, v * sigmoid(2.0 * SQRT_2_OVER_PI * (c + 0.044715 * c * c * c)));
}
