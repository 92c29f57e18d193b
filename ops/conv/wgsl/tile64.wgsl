// conv/tile64: conv/kernel's implicit GEMM in tiles of 64 output channels x 256 output positions, the
// plans' usual choice: on the H200 it ran 1.2x kernel's rate at the VAE and vocoder shapes and 2x at
// conv3d's 64 -> 64 (kernel leaves half its 128 rows empty there). Invocation (tx, ty) = (lid % 32, lid / 32)
// owns channels 4ty..4ty+3 and 32+4ty..32+4ty+3 and columns 4tx..4tx+3 and 128+4tx..128+4tx+3: the
// same 8 x 8 outputs and 64 FMAs per four reads of workgroup memory. 10 KiB of workgroup memory.
const TILE_M = 64u;
const TILE_N = 256u;
const STEP = 8u;
const LANES_M = 16u;
const LANES_N = 64u;
const HALF_M = 8u;
const HALF_N = 32u;
const A_PER = 2u; // STEP * TILE_M / 256

// #include "conv_bindings.wgsl"

// #include "conv_gemm.wgsl"
