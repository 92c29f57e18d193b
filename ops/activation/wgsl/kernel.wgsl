// activation/kernel: out[i] = f(x[i]) for one of relu2, silu, elu, tanh, gelu, gelu_tanh.
// One element per invocation; a grid over 65,535 workgroups folds into a second dimension.
// Every exp() here has an argument <= 0 and every argument is clamped where the function has
// reached its limit in f32, so no intermediate overflows for any finite x; the tails are formed so
// they do not cancel.
struct Params {
  n: u32,      // elements
  kind: u32,   // 0 relu2, 1 silu, 2 elu, 3 tanh, 4 gelu, 5 gelu_tanh
  alpha: f32,  // elu's alpha
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

const SQRT_2_OVER_PI: f32 = 0.7978845608028654;
const INV_SQRT_2: f32 = 0.7071067811865476;

// e^v - 1 for v <= 0, without the cancellation of exp(v) - 1 near 0: a Taylor polynomial there
// (degree 9: relative error below 1e-9 for |v| < 0.5), exp(v) - 1 beyond.
fn expm1_nonpositive(v: f32) -> f32 {
  if (v > -0.5) {
    let p = 1.0 / 2.0 + v * (1.0 / 6.0 + v * (1.0 / 24.0 + v * (1.0 / 120.0 + v * (1.0 / 720.0 +
      v * (1.0 / 5040.0 + v * (1.0 / 40320.0 + v * (1.0 / 362880.0)))))));
    return v + v * v * p;
  }
  return exp(v) - 1.0;
}

// 1 / (1 + e^-v) from exp(-|v|), which never overflows.
fn sigmoid(v: f32) -> f32 {
  let e = exp(-abs(v));
  return select(e, 1.0, v >= 0.0) / (1.0 + e);
}

// erfc(z) for z >= 0 with relative error below 1.2e-7 (a Chebyshev-fitted exponent of t = 1/(1 + z/2)).
fn erfc_nonnegative(z: f32) -> f32 {
  let t = 1.0 / (1.0 + 0.5 * z);
  let p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return t * exp(p - z * z);
}

fn activate(v: f32) -> f32 {
  switch (params.kind) {
    case 0u: {
      let r = max(v, 0.0);
      return r * r;
    }
    case 1u: {
      return v * sigmoid(v);
    }
    case 2u: {
      return select(params.alpha * expm1_nonpositive(v), v, v > 0.0);
    }
    case 3u: {
      // tanh|v| = -m / (2 + m) with m = e^(-2|v|) - 1 in (-1, 0]; tanh(20) is 1 in f32.
      let m = expm1_nonpositive(-2.0 * min(abs(v), 20.0));
      return sign(v) * (-m / (2.0 + m));
    }
    case 4u: {
      // x * Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2, taking erfc only of a non-negative argument
      // (and at most 20 / sqrt 2, where Phi is already 0 or 1 in f32).
      let half_tail = 0.5 * erfc_nonnegative(min(abs(v), 20.0) * INV_SQRT_2);
      return v * select(half_tail, 1.0 - half_tail, v >= 0.0);
    }
    default: {
      // x/2 * (1 + tanh(u)) = x * sigmoid(2u). Beyond |x| = 20 the sigmoid is 0 or 1 in f32, so x is
      // clamped there before it is cubed, and nothing overflows.
      let c = clamp(v, -20.0, 20.0);
      return v * sigmoid(2.0 * SQRT_2_OVER_PI * (c + 0.044715 * c * c * c));
    }
  }
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.n) {
    return;
  }
  out[i] = activate(x[i]);
}
