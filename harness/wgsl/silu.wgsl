// The logistic sigmoid and SiLU on vec4s, shared by activation (silu, swiglu) and the
// `activation: "silu"` options of group_norm and channel_norm. sigmoid takes exp of -|v| only, so it
// never overflows: 1 / (1 + e^-v) for v >= 0, e^v / (1 + e^v) below.
fn sigmoid(v: vec4f) -> vec4f {
  let e = exp(-abs(v));
  return select(e, vec4f(1.0), v >= vec4f(0.0)) / (1.0 + e);
}

fn silu(v: vec4f) -> vec4f {
  return v * sigmoid(v);
}
