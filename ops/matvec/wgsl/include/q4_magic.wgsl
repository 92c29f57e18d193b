// The int4 decode of the NVIDIA-layout kernels (q4g128.nvidia, q4g128_rows64): see q4g128.nvidia.wgsl.
// Nibble j of a half word at bits 4j .. 4j + 3 of a float whose exponent, 2^(23 - 4j), makes the
// nibble's lowest bit worth 1.
const MASK = vec4u(0xfu, 0xf0u, 0xf00u, 0xf000u);
const MAGIC = vec4u(0x4b000008u, 0x49000080u, 0x47000800u, 0x45008000u); // 2^23, 2^19, 2^15, 2^11, sign bits flipped
const BIAS = vec4f(8388616.0, 524296.0, 32776.0, 2056.0); // 2^23 + 8, 2^19 + 8, 2^15 + 8, 2^11 + 8
