// f32(absmax / LEVELS) rounded to nearest, from absmax's bit pattern (finite, non-negative), in
// integer arithmetic: WGSL allows its f32 division 2.5 ULP, and the H200's `absmax / 127.0` was off
// in the last bit for 5% of absmax values, where a weight's scale must be the converter's bit for bit.
// Expects `const LEVELS: u32` (odd, so no quotient is a tie; at most 127) and magnitude.wgsl.
// absmax = s * 2^(e - 150); with T the bits of LEVELS (2^T > LEVELS >= 2^(T - 1)), s * 2^T / LEVELS
// has 24 or 25 integer bits, so the quotient's significand is n / LEVELS for n = s << T or
// s << (T - 1), rounded on the remainder. When e <= T the result is below 2^-125 and is counted in
// units of 2^-149 (subnormal, or the smallest normal binade, whose bits are the same integer).
// A non-finite absmax (an Inf or a NaN in the row or group) gives NaN: the mark a plan leaves where
// the reference refuses (with exact_code's 0 codes, every element dequantizes to NaN).
fn exact_scale(absmax_bits: u32) -> f32 {
  if (absmax_bits >= 0x7f800000u) {
    return bitcast<f32>(absmax_bits | 0x400000u);  // a quiet NaN, made at run time (a constant NaN is refused)
  }
  let bits_of_levels = 32u - countLeadingZeros(LEVELS);
  let e = exponent(absmax_bits);
  let s = significand(absmax_bits);
  var n = s << (e - 1u);  // e <= bits_of_levels <= 7: n < 2^30, the result in units of 2^-149
  var biased = 0u;  // the result's exponent field, 0 while it is counted in units
  if (e > bits_of_levels) {
    n = s << bits_of_levels;
    biased = e - bits_of_levels;
    if (n / LEVELS >= 0x1000000u) {
      n = s << (bits_of_levels - 1u);
      biased += 1u;
    }
  }
  let whole = n / LEVELS;
  let rounded = whole + select(0u, 1u, 2u * (n - whole * LEVELS) > LEVELS);
  // A significand rounded up to 2^24 carries into the exponent field.
  return bitcast<f32>(select(rounded, (biased << 23u) + rounded - 0x800000u, biased > 0u));
}
