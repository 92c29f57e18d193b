// conv/kernel: conv1d / conv2d / conv3d as an implicit GEMM in tiles of 128 output channels x 128
// output positions (columns: n * out_sp + position), 8 x 8 outputs per invocation. The plans use it
// only for GEMMs of at most 128 columns and more than 64 output channels per group; tile64 (64 x
// 256) measured faster at every larger shape on the H200 (see mod.ts).
//
// The design is matmul's 128 x 128 tile (ops/matmul/wgsl/kernel.wgsl: sixteen named vec4
// accumulators, a's block staged transposed, the k-steps written out inline), with the two
// operands gathered while staging instead of read as matrices:
// - the weight [Cout, Cin / groups, kvol] row of output channel co at (input channel ci, kernel
//   position p) is weight[(co * cin_g + ci) * kvol + p];
// - the im2col operand at (ci, p) and column (n, od, oh, ow) is x[n, g * cin_g + ci, od * s_d - p_d +
//   kd * d_d, ...], zero outside the input.
// K is walked as blocks of STEP = 8 input channels, each for every kernel position in turn: within a
// block the kernel position is the same for the whole workgroup, so an invocation finds its
// column's input position and bounds once per block, and its input values (4 here, 8 in tile64)
// differ only by channel (x[at + ci * in_sp]); consecutive invocations take consecutive columns, so
// the loads coalesce along the output's last axis. A block's weight values are strided by kvol in memory; the kvol blocks of
// one channel block read the same 8 x kvol floats per row, so most of them should come from cache
// (not measured apart). Workgroup memory: 8 KiB (STEP 8 keeps the 64 x 256 tile within WebGPU's
// default 16 KiB with the same k-steps).
const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 8u;
const LANES_M = 32u;
const LANES_N = 32u;
const HALF_M = 16u;
const HALF_N = 16u;
const A_PER = 4u; // STEP * TILE_M / 256

// #include "conv_bindings.wgsl"

// #include "conv_gemm.wgsl"
