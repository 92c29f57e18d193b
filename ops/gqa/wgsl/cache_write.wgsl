// gqa/cache_write: RoPE and the KV-cache write of a call's rows, before gqa/cache_prefill attends. Row r
// (position pos = state.pos0 + r) of the fused projection qkv [rows, (heads + 2 * kv_heads) * dim],
// [q | k | v], gives its rotated query heads in q [rows, heads, dim] and its rotated key and its value
// written into the caches kc, vc [kv_heads, max_seq, dim] at pos. RoPE rotates adjacent pairs
// (2j, 2j + 1) by the table's (cos, sin) of (pos, j): table [max_seq, dim / 2] vec2s. One workgroup of
// 64 invocations per row.
// #include "decode_state.wgsl"
struct P { heads: u32, kv_heads: u32, dim: u32, max_seq: u32 }
@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> table: array<vec2f>;
@group(0) @binding(2) var<storage, read_write> q: array<f32>;
@group(0) @binding(3) var<storage, read_write> kc: array<f32>;
@group(0) @binding(4) var<storage, read_write> vc: array<f32>;
@group(0) @binding(5) var<storage, read> state: State;
@group(0) @binding(6) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let row = wid.x;
  let pos = state.pos0 + row;
  let half = p.dim / 2u;
  let src = row * (p.heads + 2u * p.kv_heads) * p.dim;
  for (var i = li; i < p.heads * half; i += 64u) {
    let h = i / half;
    let j = i % half;
    let cs = table[pos * half + j];
    let a = qkv[src + h * p.dim + 2u * j];
    let b = qkv[src + h * p.dim + 2u * j + 1u];
    let dst = row * p.heads * p.dim + h * p.dim + 2u * j;
    q[dst] = a * cs.x - b * cs.y;
    q[dst + 1u] = b * cs.x + a * cs.y;
  }
  let ksrc = src + p.heads * p.dim;
  for (var i = li; i < p.kv_heads * half; i += 64u) {
    let h = i / half;
    let j = i % half;
    let cs = table[pos * half + j];
    let a = qkv[ksrc + h * p.dim + 2u * j];
    let b = qkv[ksrc + h * p.dim + 2u * j + 1u];
    let dst = (h * p.max_seq + pos) * p.dim + 2u * j;
    kc[dst] = a * cs.x - b * cs.y;
    kc[dst + 1u] = b * cs.x + a * cs.y;
  }
  let vsrc = ksrc + p.kv_heads * p.dim;
  for (var i = li; i < p.kv_heads * p.dim; i += 64u) {
    let h = i / p.dim;
    vc[(h * p.max_seq + pos) * p.dim + i % p.dim] = qkv[vsrc + i];
  }
}