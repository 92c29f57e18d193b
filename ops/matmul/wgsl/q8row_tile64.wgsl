// matmul/q8row_tile64: c = a @ dequant(weight)^T (F.linear), a is [M, K] f32, c is [M, N] f32, and the
// weight [N, K] is int8: weight is [N, ceil(K/4)] u32, four two's-complement codes per word, least
// significant byte first, and scales[n] is row n's scale.
// c[m, n] = scales[n] * sum_k a[m, k] * code[n, k].
//
// The 64 x 64 tile, for problems too small to keep a GPU busy with q8row's 128 x 128 tiles (prefill
// of a short prompt): a 64 x 64 tile of c per workgroup, 4 x 4 outputs per invocation in four named
// vec4 accumulators, K walked 16 at a time with a's block staged transposed. The weight is
// decoded while it is staged (one word, four codes, per invocation per step; no separate dequantize
// pass): the codes are exact in f32, so the sum is of a times the codes, and each output is scaled
// once at the end. Codes in the padding of a row's last word (k >= K) stage as zeros. Loads outside
// the operands stage zeros and stores outside c are skipped, so every M, N, K >= 1 works. Tiles
// beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<u32>;
@group(0) @binding(2) var<storage, read> scales: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

// #include "tile64_q_decls.wgsl"

// #include "load_a_scalar.wgsl"

// #include "q8_load_word.wgsl"

// #include "q8_load_scale.wgsl"

// #include "q8_infinite_scale.wgsl"

// #include "store_c_scalar.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile64_q_setup.wgsl"

// #include "q8row_tile64_loop.wgsl"

// #include "tile64_q8_scale.wgsl"

// #include "tile64_q_store.wgsl"
}
