// Whether an f32 is NaN, by its bits (a compiler may fold `x != x` away). Expects nothing.
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
