// A finite f32 magnitude (bits without the sign) as significand * 2^(exponent - 150), both integers.
fn significand(magnitude: u32) -> u32 {
  return (magnitude & 0x7fffffu) | select(0u, 0x800000u, magnitude >= 0x800000u);
}

fn exponent(magnitude: u32) -> u32 {
  return max(magnitude >> 23u, 1u);
}
