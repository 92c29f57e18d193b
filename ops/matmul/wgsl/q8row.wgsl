// matmul/q8row: c = a @ dequant(weight)^T (F.linear), a is [M, K] f32, c is [M, N] f32, and the weight
// [N, K] is int8: weight is [N, ceil(K/4)] u32, four two's-complement codes per word, least
// significant byte first, and scales[n] is row n's scale. c[m, n] = scales[n] * sum_k a[m, k] * code[n, k].
//
// The tiling is matmul/kernel's, with the weight in b's place (see kernel.wgsl for the design and
// why): each workgroup computes one 128 x 128 tile of c; each of its 256 invocations owns 8 x 8
// outputs in sixteen named vec4 accumulators, function-local variables of main, rows 4ty..4ty+3 and
// 64+4ty..64+4ty+3 and columns 4tx..4tx+3 and 64+4tx..64+4tx+3 for (tx, ty) = (lid % 16, lid / 16).
// K is walked 16 at a time through one stage of workgroup memory (16 KiB): loads, stores, a
// barrier, the 16 k-steps written out inline in main, a barrier.
//
// The weight is decoded as it is staged (two words, eight codes, per invocation per block; no
// separate dequantize pass), transposed into the same layout as b's: the codes are exact in f32, so
// the sum is of a times the codes, and each output is scaled once at the end. Codes in the padding
// of a row's last word (k >= K) stage as zeros. a is read a vec4 at a time when K % 4 == 0 and c
// written so when N % 4 == 0, element by element otherwise. Every guard is in the staging loads and
// the final stores, none in the k-steps: loads outside the operands stage zeros and stores outside c
// are skipped, so every M, N, K >= 1 works. Tiles beyond 65,535 fold into y:
// tile = id.x + id.y * num_workgroups.x, bound-checked.

// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<u32>;
@group(0) @binding(2) var<storage, read> scales: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<vec4f>;
@group(0) @binding(4) var<uniform> params: Params;

// #include "tile128_decls.wgsl"

// #include "load_a.wgsl"

// #include "q8_load_word.wgsl"

// #include "q8_decode.wgsl"

// #include "q8_load_scale.wgsl"

// #include "q8_infinite_scale.wgsl"

// #include "store_c.wgsl"

// #include "gemm_stage_t.wgsl"

// #include "stage_w.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile128_origin.wgsl"

// #include "gemm_acc8x8.wgsl"

// #include "q8row_loop.wgsl"

// #include "q8row_scale.wgsl"

// #include "tile128_store.wgsl"
}
