// The bindings and params of both conv_transpose tiles; mod.ts packs the params in this order.
struct Params {
  cin: u32,
  cout: u32,
  groups: u32,
  cin_g: u32,     // input channels per group
  cout_g: u32,    // output channels per group
  has_bias: u32,
  k: u32,         // kernel taps
  stride: u32,
  padding: u32,
  dilation: u32,
  l_in: u32,
  l_out: u32,
  j_count: u32,   // columns per sample and phase: ceil(l_out / stride)
  cols: u32,      // n * j_count
  tiles_m: u32,   // tiles over cout_g
  tiles_n: u32,   // tiles over cols
  tap_step: u32,  // taps between two of one phase: stride / gcd(stride, dilation)
  shift_step: u32, // input positions between two taps of one phase: dilation / gcd(stride, dilation)
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;
