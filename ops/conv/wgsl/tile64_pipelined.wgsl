// conv/tile64_pipelined: conv/tile64 (64 output channels x 256 output positions per workgroup, 8 x 8
// outputs per invocation, the same bindings and params) with a pipelined walk over K, for large
// convolutions on a device that allows more than WebGPU's default 16 KiB of workgroup memory. Its
// outputs are bit-identical to tile64's: the same staged values and the same FMAs in the same order
// (blocks of STEP = 8 input channels, each for every kernel position in turn).
//
// Design (include/conv_gemm_pipelined.wgsl): two stages of one block each, 10 KiB a stage, 20 KiB of
// workgroup memory (a_t 2 x 8 x 16 vec4s, b_s 2 x 8 x 64). Per invocation per block, 10 global loads
// (8 gathered input values of one column, 2 weight values) are issued into registers before the
// previous block's 8 k-steps (512 FMAs) and stored to the other stage after them; one barrier per
// block, against tile64's two. The tile is tile64's because the plans' usual choice already runs it:
// the wide tile measured faster than the 128 x 128 one at every large shape (mod.ts), and a K-step of
// 16 in two stages would need 40 KiB, over the 32 KiB granted by the software adapter. Its speed
// against tile64 is to be measured (the bench times both); until then only an override takes it.
const TILE_M = 64u;
const TILE_N = 256u;
const STEP = 8u;
const LANES_M = 16u;
const LANES_N = 64u;
const HALF_M = 8u;
const HALF_N = 32u;
const A_PER = 2u; // STEP * TILE_M / 256

// #include "conv_bindings.wgsl"

// #include "conv_gemm_pipelined.wgsl"
