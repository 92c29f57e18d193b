// The params and bindings of matvec/kernel (both variants).
struct Params {
  n: u32, // rows of weight, length of y
  k: u32, // columns of weight, length of x
}

@group(0) @binding(0) var<storage, read> weight: array<vec4f>;
@group(0) @binding(1) var<storage, read> x: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;
