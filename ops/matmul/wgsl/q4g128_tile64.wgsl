// matmul/q4g128_tile64: c = a @ dequant(weight)^T (F.linear), a is [M, K] f32, c is [M, N] f32, and
// the weight [N, K] is int4 in groups of 128 columns: weight is [N, ceil(K/8)] u32, eight
// two's-complement nibbles per word, least significant nibble first, and scales[n, g] (scales is
// [N, ceil(K/128)]) scales columns 128g .. 128g + 127 of row n.
// c[m, n] = sum_k a[m, k] * code[n, k] * scales[n, k / 128].
//
// The 64 x 64 tile, for problems too small to keep a GPU busy with q4g128's 128 x 128 tiles
// (prefill of a short prompt): a 64 x 64 tile of c per workgroup, 4 x 4 outputs per invocation in
// four named vec4 accumulators, K walked 16 at a time with a's block staged transposed. The weight is
// decoded while it is staged (four nibbles per invocation per step; no separate dequantize pass).
// A step of 16 columns never straddles a group of 128, so each staged value is code * its group's
// scale, rounded once to f32. Codes in the padding of a row's last word (k >= K) stage as zeros.
// Loads outside the operands stage zeros and stores outside c are skipped, so every M, N, K >= 1
// works. Tiles beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<u32>;
@group(0) @binding(2) var<storage, read> scales: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

// #include "tile64_q_decls.wgsl"

// #include "load_a_scalar.wgsl"

const GROUP = 128u; // columns of a weight row per scale

// #include "q4_load_word_scale.wgsl"

// #include "store_c_scalar.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile64_q_setup.wgsl"

// #include "q4g128_tile64_loop.wgsl"

// #include "tile64_q_store.wgsl"
}
