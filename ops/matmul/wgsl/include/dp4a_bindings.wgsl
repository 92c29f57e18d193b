// The bindings of the dp4a products (q8row_dp4a, q4g128_dp4a and their tile64 kernels): a's int8
// codes, four to a u32, with a scale per row; the weight's codes and scales; c, f32; the params.
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> a_scales: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<u32>;
@group(0) @binding(3) var<storage, read> scales: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;
@group(0) @binding(5) var<uniform> params: Params;
