// matmul/kernel: c = a @ b, a is [M, K], b is [K, N], c is [M, N], all f32 row-major.
// The 128 x 128 tile, for problems large enough to keep a GPU busy with it (see tile64 otherwise).
//
// Each workgroup computes one 128 x 128 tile of c; each of its 256 invocations owns 8 x 8 outputs
// in sixteen named vec4 accumulators, function-local variables of main. Invocation (tx, ty) =
// (lid % 16, lid / 16) owns rows 4ty..4ty+3 ("top") and 64+4ty..64+4ty+3 ("bottom") and columns
// 4tx..4tx+3 ("left") and 64+4tx..64+4tx+3 ("right"), so that neighbouring invocations read
// neighbouring vec4s of workgroup memory and write neighbouring vec4s of c. Per k, four vec4 reads
// of workgroup memory feed 64 FMAs.
//
// K is walked 16 at a time through one stage of workgroup memory (2 x 512 vec4s, 16 KiB: WebGPU's
// default maxComputeWorkgroupStorageSize): each invocation loads its share of the block (two vec4s
// of a, two of b) and stores it, a barrier, the block's 16 k-steps, a barrier. The k-steps are
// written out inline in main (k_steps128.wgsl), neither looped over (a driver may not unroll a WGSL
// loop) nor called as a function.
//
// Why this shape: on the H200 (Vulkan, no subgroups), a scratch kernel of this design (without the
// bound checks below) ran 4096^3 at 37.0 TFLOP/s where the previous NVIDIA kernel (two stages of
// K-step 16 at 32 KiB with the next block prefetched into registers, the accumulators module-scope
// private variables and each k-step a function call) ran at 29.5. Which of the three differences
// matter most was not measured apart.
//
// a's block is staged transposed, so one vec4 read gives an invocation four of its rows at one k,
// and b's block as vec4s along a row. a, b and c are read and written a vec4 at a time when their
// rows start on 16-byte boundaries (K % 4 == 0 for a, N % 4 == 0 for b and c), and element by
// element otherwise. Every guard is in the staging loads and the final stores, none in the k-steps:
// loads outside a or b stage zeros and stores outside c are skipped, so every M, N, K >= 1 works.
// Tiles beyond 65,535 fold into y: tile = id.x + id.y * num_workgroups.x, bound-checked.
//
// Interior tiles skip the guards: a tile wholly inside c, when K % 4 == 0 and N % 4 == 0, stages its
// full blocks of K with unchecked vec4 loads at indices computed once (a_quad, b_quad) and stores c
// unchecked; only a ragged last block of K and the edge tiles take the checked loads. The choice is
// one branch per block, the same for the whole workgroup, so the k-steps are written once. On the
// H200 (2026-11-30, GPU timestamps, warm clocks) this took 4096^3 from 34.8 to 36.4 TFLOP/s and the
// prefill shape 512 x 14336 x 4096 from 30.0 to 30.8; the same path as a second K loop of its own
// (the k-steps written twice) was slower (35.9 at 4096^3).

// #include "bindings_f32.wgsl"

// #include "load_a.wgsl"

// #include "load_b.wgsl"

// #include "quads_f32.wgsl"

// The tile itself, constants, workgroup memory and main, is include/tile128.wgsl (kernel and
// f16storage differ only in their bindings and the loads above).
// #include "tile128.wgsl"
