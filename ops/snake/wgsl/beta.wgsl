// snake/beta: out = x + sin(alpha[c] x)^2 / (beta[c] + 1e-9) over x [N, C, L] (BigVGAN's SnakeBeta).
@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> alpha: array<f32>;
@group(0) @binding(2) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(4) var<uniform> params: Params;

// The divisor of channel c's reciprocal.
fn divisor_of(c: u32) -> f32 {
  return beta[c];
}

// #include "snake_stream.wgsl"
