// snake/kernel: out = x + sin(alpha[c] x)^2 / (alpha[c] + 1e-9) over x [N, C, L] (Snake1d).
// The divisor is alpha itself.
@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> alpha: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

// The divisor of channel c's reciprocal.
fn divisor_of(c: u32) -> f32 {
  return alpha[c];
}

// #include "snake_stream.wgsl"
