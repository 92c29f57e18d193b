// The params and bindings of the fused dp4a products (q8row_dp4a_fused, q4g128_dp4a_fused and their
// tile64 kernels): dp4a_bindings.wgsl's, with the epilogue's bias ([N]) and gate ([M / gate_rows,
// N]) before c, and the epilogue's flags in params (params_fused.wgsl). c is read as well as written
// when the epilogue accumulates.
// #include "params_fused.wgsl"

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> a_scales: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<u32>;
@group(0) @binding(3) var<storage, read> scales: array<f32>;
@group(0) @binding(4) var<storage, read> bias: array<f32>;
@group(0) @binding(5) var<storage, read> gate: array<f32>;
@group(0) @binding(6) var<storage, read_write> c: array<f32>;
@group(0) @binding(7) var<uniform> params: Params;
