// conv_transpose/tile64: conv_transpose/kernel's GEMM in tiles of 64 output channels x 256 columns,
// the plan's usual choice (1.08-1.13x kernel's rate at the vocoder shapes on the H200, as conv's
// tile64 against its kernel; harness/baselines/nvidia-h200-log/32-convt-ab.txt). 10 KiB of
// workgroup memory.
const TILE_M = 64u;
const TILE_N = 256u;
const STEP = 8u;
const LANES_M = 16u;
const LANES_N = 64u;
const HALF_M = 8u;
const HALF_N = 32u;
const A_PER = 2u; // STEP * TILE_M / 256

// #include "conv_transpose_bindings.wgsl"

// #include "conv_transpose_gemm.wgsl"
