// The int8 decode of the NVIDIA-layout kernels (q8row.nvidia, q8row_rows64): see q8row.nvidia.wgsl.
// Byte j of a word at bits 8 (j % 2) .. 8 (j % 2) + 7 of a float whose exponent (2^23, 2^15) makes
// the byte's lowest bit worth 1.
const MASK = vec4u(0xffu, 0xff00u, 0xffu, 0xff00u);
const MAGIC = vec4u(0x4b000080u, 0x47008000u, 0x4b000080u, 0x47008000u); // 2^23, 2^15, sign bits flipped
const BIAS = vec4f(8388736.0, 32896.0, 8388736.0, 32896.0); // 2^23 + 128, 2^15 + 128
