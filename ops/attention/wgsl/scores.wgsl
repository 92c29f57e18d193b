// attention/scores: the first of attention's two dispatches. scores[b, h, i, j] = q[b, h, i] · k[b, h / group, j]
// * scale + mask[b, h, i, j] (broadcast), for q [B, H, L, D] and k [B, H / group, S, D], any D.
// A key hidden by `causal` (j > i + offset) is written as LOWEST, the lowest finite f32; a mask of
// -inf stays -inf. weighted_sum treats every score <= LOWEST as masked.
//
// Workgroup (key tile, row tile, b * H + h), flattened: 16 x 16 scores, one per invocation; each dot product is a
// plain loop over D reading q and k from memory (the unfused path is the reference-shaped one; the
// fused kernel that matters for speed is flash_attention's).

struct Params {
  L: u32,
  S: u32,
  H: u32,
  group: u32,   // query heads per KV head
  D: u32,
  scale: f32,
  causal: u32,
  offset: i32,  // key j is visible to row i under causal iff j <= i + offset
  masked: u32,  // 1 when `mask` holds an additive mask
  mask_b: u32,  // strides of the mask over b, h, i (0 where it broadcasts); 1 over j
  mask_h: u32,
  mask_i: u32,
  key_tiles: u32,  // ceil(S / 16)
  row_tiles: u32,  // ceil(L / 16)
  BH: u32,         // B * H
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> mask: array<f32>;
@group(0) @binding(3) var<storage, read_write> scores: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

const LOWEST = -0x1.fffffep+127f;

@compute @workgroup_size(16, 16)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
  // Tiles (key tile fastest, then row tile, then head) beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x.
  let tile = wid.x + wid.y * grid.x;
  let j = (tile % params.key_tiles) * 16u + lid.x;
  let i = (tile / params.key_tiles) % params.row_tiles * 16u + lid.y;
  let bh = tile / (params.key_tiles * params.row_tiles);
  if (bh >= params.BH || i >= params.L || j >= params.S) {
    return;
  }
  let b = bh / params.H;
  let h = bh % params.H;
  let kv_heads = params.H / params.group;
  let q_row = (bh * params.L + i) * params.D;
  let k_row = ((b * kv_heads + h / params.group) * params.S + j) * params.D;
  var dot_qk = 0.0;
  for (var d = 0u; d < params.D; d++) {
    dot_qk += q[q_row + d] * k[k_row + d];
  }
  var s = dot_qk * params.scale;
  if (params.masked != 0u) {
    s += mask[b * params.mask_b + h * params.mask_h + i * params.mask_i + j];
  }
  if (params.causal != 0u && i32(j) > i32(i) + params.offset) {
    s = LOWEST;
  }
  scores[(bh * params.L + i) * params.S + j] = s;
}
