// The params and bindings of the f32 GEMMs with a Linear weight [N, K] in b's place (linear,
// linear_tile64): a, the weight and c as vec4s, so that a row whose length is a multiple of 4 is
// read and written a vec4 at a time.
// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;
