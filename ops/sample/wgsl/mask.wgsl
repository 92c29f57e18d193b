// sample/mask: a constraint's mask applied to one row of logits: ids whose bit in `mask` (bit i % 32
// of word i / 32) is clear get logit -Infinity, which neither the greedy choice nor the draw takes.
// -Infinity comes in the params (`minus_inf`): WGSL has no literal for it, and Tint (Chrome's
// compiler) refuses a shader that makes one from constants (`bitcast<f32>(0xff800000u)`).
struct P { vocab: u32, minus_inf: f32 }
@group(0) @binding(0) var<storage, read_write> logits: array<f32>;
@group(0) @binding(1) var<storage, read> mask: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x;
  if (i >= p.vocab) { return; }
  if (((mask[i / 32u] >> (i % 32u)) & 1u) == 0u) { logits[i] = p.minus_inf; }
}