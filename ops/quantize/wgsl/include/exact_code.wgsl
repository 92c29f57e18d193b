// exact_code(x_bits, absmax_bits): round(x * LEVELS / absmax), ties toward +Infinity, for |x| <= absmax,
// from the bit patterns of x and absmax, in integer arithmetic (WGSL allows its f32 division 2.5 ULP,
// and a code must be the reference's exactly). Expects `const LEVELS: u32`, the largest code (127 for
// q8, 7 for q4; at most 127), and magnitude.wgsl. A non-finite absmax (the row or group holds an Inf
// or a NaN) gives 0: with exact_scale's NaN, the mark a plan leaves where the reference refuses.
fn exact_code(x_bits: u32, absmax_bits: u32) -> i32 {
  if (absmax_bits >= 0x7f800000u) {
    return 0;
  }
  let magnitude = x_bits & 0x7fffffffu;
  if (magnitude == 0u) {
    return 0;  // which covers every element of a row of zeros, so absmax > 0 below
  }
  // |x| <= absmax, so |x|'s exponent is at most absmax's.
  let shift = exponent(absmax_bits) - exponent(magnitude);
  if (shift > 8u) {
    return 0;  // |quotient| < LEVELS * 2^24 / 2^(23 + 9) < 0.5
  }
  // |quotient| = numerator / denominator exactly; numerator < 2^31 and denominator < 2^32.
  let numerator = LEVELS * significand(magnitude);
  let denominator = significand(absmax_bits) << shift;
  let whole = numerator / denominator;
  let twice_remainder = 2u * (numerator - whole * denominator);
  let negative = x_bits >= 0x80000000u;
  // A tie goes up in magnitude for positive x and down for negative x: toward +Infinity.
  let round_up = twice_remainder > denominator || (twice_remainder == denominator && !negative);
  let code = i32(whole + select(0u, 1u, round_up));
  return select(code, -code, negative);
}
