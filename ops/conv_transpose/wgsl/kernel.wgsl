// conv_transpose/kernel: conv_transpose1d as a phase-split implicit GEMM (see
// include/conv_transpose_gemm.wgsl) in tiles of 128 output channels x 128 columns of a phase, 8 x 8
// outputs per invocation, for GEMMs of at most 128 columns per phase and more than 64 output
// channels per group (tile64 otherwise). 8 KiB of workgroup memory.
const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 8u;
const LANES_M = 32u;
const LANES_N = 32u;
const HALF_M = 16u;
const HALF_N = 16u;
const A_PER = 4u; // STEP * TILE_M / 256

// #include "conv_transpose_bindings.wgsl"

// #include "conv_transpose_gemm.wgsl"
