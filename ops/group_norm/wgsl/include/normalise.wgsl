// The second half of group_norm: (x - mean) * inverseSqrt(var + eps) * weight[c] + bias[c], c the
// element's channel, then silu when params.activation is 1, for one quad (aligned) or one element
// (ragged) of a row. Needs x, weight, bias, out and params.

// #include "silu.wgsl"

fn activate(y: vec4f) -> vec4f {
  if (params.activation == 1u) {
    return silu(y);
  }
  return y;
}

fn gamma(c: u32) -> f32 {
  return select(1.0, weight[c], params.has_weight != 0u);
}

fn beta(c: u32) -> f32 {
  return select(0.0, bias[c], params.has_bias != 0u);
}

// Quad j of the row whose first quad is `first`, when j < end; channel0 is the row's first channel.
fn put_quad(first: u32, j: u32, end: u32, v: vec4f, mean: f32, rstd: f32, channel0: u32) {
  if (j < end) {
    let c = channel0 + (4u * j) / params.l;
    out[first + j] = activate((v - mean) * (rstd * gamma(c)) + beta(c));
  }
}

// Element j of the row whose first element is `first`, when j < end.
fn put_element(first: u32, j: u32, end: u32, v: f32, mean: f32, rstd: f32, channel0: u32) {
  if (j < end) {
    let c = channel0 + j / params.l;
    let e = first + j;
    out[e / 4u][e % 4u] = activate(vec4f((v - mean) * (rstd * gamma(c)) + beta(c))).x;
  }
}
