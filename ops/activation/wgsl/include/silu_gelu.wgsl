// The functions activation/kernel and activation/gated share: NaN passed through, erfc, and silu
// and gelu (the erf form) with torch's answers at NaN and ±Infinity (see reference.ts). Includes
// harness/wgsl/silu.wgsl for the sigmoid.

// #include "silu.wgsl"

const INV_SQRT_2: f32 = 0.7071067811865476;

// NaN in, NaN out, as torch: recognised from its bits and passed through, since WGSL lets a
// compiler assume no NaN reaches max(), min() or clamp() (max(NaN, 0) may be 0). ±Infinity needs no
// such care: each function below gives torch's answer for it in IEEE arithmetic (see reference.ts).
fn keep_nan(v: vec4f, r: vec4f) -> vec4f {
  return select(r, v, (bitcast<vec4u>(v) & vec4u(0x7fffffffu)) > vec4u(0x7f800000u));
}

// erfc(z) for z >= 0 with relative error below 1.2e-7 (a Chebyshev-fitted exponent of t = 1/(1 + z/2)).
fn erfc_nonnegative(z: vec4f) -> vec4f {
  let t = 1.0 / (1.0 + 0.5 * z);
  let p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return t * exp(p - z * z);
}

fn f_silu(v: vec4f) -> vec4f {
  return keep_nan(v, silu(v));
}

// x * Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2, taking erfc only of a non-negative argument (and at
// most 20 / sqrt 2, where Phi is already 0 or 1 in f32).
fn f_gelu(v: vec4f) -> vec4f {
  let half_tail = 0.5 * erfc_nonnegative(min(abs(v), vec4f(20.0)) * INV_SQRT_2);
  return keep_nan(v, v * select(half_tail, 1.0 - half_tail, v >= vec4f(0.0)));
}
