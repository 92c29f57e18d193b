// The bindings and params of both conv tiles; mod.ts packs the params in this order. Spatial sizes
// are 3-D (D, H, W); conv1d and conv2d have unit outer axes.
struct Params {
  cin: u32,
  cout: u32,
  groups: u32,
  cin_g: u32,     // input channels per group
  cout_g: u32,    // output channels per group
  has_bias: u32,
  kvol: u32,      // k_d * k_h * k_w
  cols: u32,      // n * out_sp: the GEMM's columns
  in_d: u32,
  in_h: u32,
  in_w: u32,
  in_hw: u32,
  in_sp: u32,
  out_w: u32,
  out_hw: u32,
  out_sp: u32,
  k_h: u32,
  k_w: u32,
  stride_d: u32,
  stride_h: u32,
  stride_w: u32,
  pad_d: u32,
  pad_h: u32,
  pad_w: u32,
  dil_d: u32,
  dil_h: u32,
  dil_w: u32,
  tiles_m: u32,   // tiles over cout_g
  tiles_n: u32,   // tiles over cols
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(4) var<uniform> params: Params;
