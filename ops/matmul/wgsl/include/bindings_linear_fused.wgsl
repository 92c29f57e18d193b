// The params and bindings of the fused f32 GEMMs with a Linear weight [N, K] (linear_fused,
// linear_tile64_fused): bindings_linear.wgsl's, with the epilogue's bias ([N]) and gate
// ([M / gate_rows, N]) before c, and the epilogue's flags in params (params_fused.wgsl). c is read as
// well as written when the epilogue accumulates.
// #include "params_fused.wgsl"

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<vec4f>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read> gate: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<vec4f>;
@group(0) @binding(5) var<uniform> params: Params;
