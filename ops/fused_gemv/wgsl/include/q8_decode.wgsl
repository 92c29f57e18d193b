// The int8 decode of matvec's q8row.nvidia: a word's four codes as floats, exactly (the code's bits
// masked into the mantissa of a float whose exponent makes its unit 1, the sign bit flipped, the bias
// subtracted: no integer-to-float conversion). `word(e)` reads word e of the weight, bound as
// `weight: array<vec4u>`, for rows that do not start on a 16-byte boundary.
const MASK = vec4u(0xffu, 0xff00u, 0xffu, 0xff00u);
const MAGIC = vec4u(0x4b000080u, 0x47008000u, 0x4b000080u, 0x47008000u); // 2^23, 2^15, sign bits flipped
const BIAS = vec4f(8388736.0, 32896.0, 8388736.0, 32896.0); // 2^23 + 128, 2^15 + 128
fn q8(w: u32) -> vec4f {
  return bitcast<vec4f>((vec4u(w, w, w >> 16u, w >> 16u) & MASK) ^ MAGIC) - BIAS;
}
fn word(e: u32) -> u32 { return weight[e / 4u][e % 4u]; }
