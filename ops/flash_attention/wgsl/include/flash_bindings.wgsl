// The bindings and params of flash_attention's kernels (kernel.wgsl says what each holds).
struct Params {
  L: u32,
  S: u32,
  H: u32,
  group: u32,   // query heads per KV head
  dq: u32,      // D / 4
  dvq: u32,     // Dv / 4
  scale: f32,
  causal: u32,
  offset: i32,  // key j is visible to row i under causal iff j <= i + offset
  masked: u32,  // 1 when `mask` holds an additive mask
  mask_b: u32,  // strides of the mask over b, h, i (0 where it broadcasts); 1 over j
  mask_h: u32,
  mask_i: u32,
  tiles: u32,   // row tiles per head: ceil(L / ROWS)
  BH: u32,      // B * H
}

@group(0) @binding(0) var<storage, read> q: array<vec4f>;
@group(0) @binding(1) var<storage, read> k: array<vec4f>;
@group(0) @binding(2) var<storage, read> v: array<vec4f>;
@group(0) @binding(3) var<storage, read> mask: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(5) var<uniform> params: Params;

const LOWEST = -0x1.fffffep+127f;
