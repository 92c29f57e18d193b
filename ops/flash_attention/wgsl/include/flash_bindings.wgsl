// The bindings and params of flash_attention's kernels (kernel.wgsl says what each holds). A "row" is
// one head's D (or Dv) values of one token; batch b's rows start at b * H * L in q and out and at
// b * kv_heads * S in k and v in either layout, and the four strides below place a head and a token
// within the batch: heads-first [B, H, L, D] or token-major [B, L, H, D] (mod.ts sets them).
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
  q_head: u32,  // rows of q (and out) between two heads: L for [B, H, L, D], 1 for [B, L, H, D]
  q_step: u32,  // rows of q (and out) between two query rows: 1 for [B, H, L, D], H for [B, L, H, D]
  kv_head: u32, // rows of k (and v) between two KV heads: S, or 1 token-major
  kv_step: u32, // rows of k (and v) between two keys: 1, or kv_heads token-major
}

@group(0) @binding(0) var<storage, read> q: array<vec4f>;
@group(0) @binding(1) var<storage, read> k: array<vec4f>;
@group(0) @binding(2) var<storage, read> v: array<vec4f>;
@group(0) @binding(3) var<storage, read> mask: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(5) var<uniform> params: Params;

const LOWEST = -0x1.fffffep+127f;

// #include "live_score.wgsl"

// Row of query row 0 of head h of batch b in q and out; query row i is `q_step` rows further.
fn q_base_of(b: u32, h: u32) -> u32 {
  return b * params.H * params.L + h * params.q_head;
}

// Row of key 0 of KV head g of batch b in k and v; key j is `kv_step` rows further.
fn kv_base_of(b: u32, g: u32) -> u32 {
  return b * (params.H / params.group) * params.S + g * params.kv_head;
}

// How many of the n keys from `key` on row `row` sees: all n, or under causal those up to row + offset.
fn seen_by(row: u32, key: u32, n: u32) -> u32 {
  if (params.causal == 0u) {
    return n;
  }
  return u32(clamp(i32(row) + params.offset + 1 - i32(key), 0, i32(n)));
}

// Whether rows row .. row + 3 see key `key`: always, or under causal when key <= row + offset.
fn sees(row: u32, key: u32) -> vec4<bool> {
  let rows = vec4<i32>(i32(row)) + vec4<i32>(0, 1, 2, 3) + vec4<i32>(params.offset);
  return vec4<bool>(params.causal == 0u) | (rows >= vec4<i32>(i32(key)));
}
