// The exact-FMA fallback of axpy/kernel and axpy/inplace.
//
// WGSL lets fma() round twice, and some devices do (llvmpipe computes it as a multiply, then an
// add). The host passes a probe whose answer tells the two apart: fma(f32(0.1), 3, -f32(0.3)) is
// -2^-27 rounded once and exactly 0 rounded twice. Where fma() is fused the kernel uses it;
// elsewhere it computes the once-rounded result in integer arithmetic (exact_fma4, below). The probe
// is uniform, so the choice is made once per dispatch: the fused path is the streaming loop alone,
// and the exact fallback runs in a separate, simpler loop that the fused path never enters.
// (Recovering a rounding error with float operations is not safe there: it needs
// c - ((c + p) - p) evaluated as written, and llvmpipe's compiler simplifies it to 0.)
//
// 64-bit unsigned integers as vec2u(low word, high word), for the exact fallback below.
fn clz64(v: vec2u) -> u32 {
  return select(countLeadingZeros(v.y), 32u + countLeadingZeros(v.x), v.y == 0u);
}

fn shl64(v: vec2u, s: u32) -> vec2u {
  if (s == 0u) {
    return v;
  }
  if (s >= 32u) {
    return vec2u(0u, v.x << (s - 32u));
  }
  return vec2u(v.x << s, (v.y << s) | (v.x >> (32u - s)));
}

// v >> s, with any nonzero bit shifted out kept as bit 0 (so rounding still sees it).
fn shr64_sticky(v: vec2u, s: u32) -> vec2u {
  if (s == 0u) {
    return v;
  }
  if (s >= 64u) {
    return vec2u(select(0u, 1u, any(v != vec2u(0u))), 0u);
  }
  var kept: vec2u;
  var lost: u32;
  if (s == 32u) {
    kept = vec2u(v.y, 0u);
    lost = v.x;
  } else if (s > 32u) {
    kept = vec2u(v.y >> (s - 32u), 0u);
    lost = v.x | (v.y << (64u - s));
  } else {
    kept = vec2u((v.x >> s) | (v.y << (32u - s)), v.y >> s);
    lost = v.x << (32u - s);
  }
  return vec2u(kept.x | select(0u, 1u, lost != 0u), kept.y);
}

fn add64(a: vec2u, b: vec2u) -> vec2u {
  let low = a.x + b.x;
  return vec2u(low, a.y + b.y + select(0u, 1u, low < a.x));
}

fn sub64(a: vec2u, b: vec2u) -> vec2u {
  return vec2u(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}

// The 48-bit product of two 24-bit integers.
fn mul24x24(a: u32, b: u32) -> vec2u {
  let a1 = a >> 16u;
  let a0 = a & 0xffffu;
  let b1 = b >> 16u;
  let b0 = b & 0xffffu;
  let middle = a1 * b0 + a0 * b1;
  return add64(vec2u(a0 * b0, a1 * b1), vec2u(middle << 16u, middle >> 16u));
}

// A finite nonzero f32 as (integer significand, exponent): |v| = significand * 2^(exponent - 150).
fn significand(bits: u32) -> u32 {
  let biased = (bits >> 23u) & 0xffu;
  return (bits & 0x7fffffu) | select(0u, 0x800000u, biased != 0u);
}

fn exponent(bits: u32) -> i32 {
  return max(i32((bits >> 23u) & 0xffu), 1);
}

// a * b + c rounded once, in integer arithmetic: the product is exact in 48 bits, the sum exact in
// 64 bits up to a sticky bit, and the one rounding is done by hand, subnormal results included.
fn exact_fma(a: f32, b: f32, c: f32) -> f32 {
  let ua = bitcast<u32>(a);
  let ub = bitcast<u32>(b);
  let uc = bitcast<u32>(c);
  if (((ua >> 23u) & 0xffu) == 0xffu || ((ub >> 23u) & 0xffu) == 0xffu) {
    return a * b + c;  // an infinite or NaN product: nothing to round
  }
  if (((uc >> 23u) & 0xffu) == 0xffu) {
    return c;  // a finite product added to an infinity or NaN
  }
  let product = mul24x24(significand(ua), significand(ub));
  if (all(product == vec2u(0u))) {
    return c + a * b;  // the product is a signed zero, exact
  }
  // Both operands as 64-bit integers with the leading one at bit 61, value = m * 2^e.
  let p = shl64(product, clz64(product) - 2u);
  let pe = exponent(ua) + exponent(ub) - 300 - (i32(clz64(product)) - 2);
  let p_negative = ((ua ^ ub) >> 31u) == 1u;
  var sum = p;
  var sum_e = pe;
  var negative = p_negative;
  let c_significand = vec2u(significand(uc), 0u);
  if (c_significand.x != 0u) {
    let q = shl64(c_significand, clz64(c_significand) - 2u);
    let qe = exponent(uc) - 150 - (i32(clz64(c_significand)) - 2);
    let q_negative = (uc >> 31u) == 1u;
    // big is the operand of larger magnitude; small is aligned to it.
    let p_is_big = pe > qe || (pe == qe && (p.y > q.y || (p.y == q.y && p.x >= q.x)));
    let big = select(q, p, p_is_big);
    let big_e = select(qe, pe, p_is_big);
    let small = shr64_sticky(select(p, q, p_is_big), u32(min(abs(pe - qe), 64)));
    negative = select(q_negative, p_negative, p_is_big);
    sum_e = big_e;
    if (p_negative == q_negative) {
      sum = add64(big, small);
    } else {
      sum = sub64(big, small);
      if (all(sum == vec2u(0u))) {
        return 0.0;  // exact cancellation rounds to +0
      }
    }
  }
  // Leading one to bit 63; the f32 significand is then the top 24 bits, biased exponent sum_e + 190.
  let lead = clz64(sum);
  sum = shl64(sum, lead);
  let biased = sum_e - i32(lead) + 190;
  let sign = select(0u, 0x80000000u, negative);
  if (biased >= 255) {
    return bitcast<f32>(sign | 0x7f800000u);
  }
  // Bits of the high word below the result's last place; a subnormal result drops more of them.
  let dropped = u32(8 + max(0, 1 - biased));
  if (dropped > 32u) {
    return bitcast<f32>(sign);
  }
  let below_low_word = sum.x != 0u;
  var kept = 0u;
  var remainder = sum.y;
  if (dropped < 32u) {
    kept = sum.y >> dropped;
    remainder = sum.y & ((1u << dropped) - 1u);
  }
  let half = 1u << (dropped - 1u);
  if (remainder > half || (remainder == half && (below_low_word || (kept & 1u) == 1u))) {
    kept += 1u;  // may carry into the exponent, which is the right answer
  }
  let exponent_field = u32(max(biased - 1, 0)) << 23u;
  return bitcast<f32>(sign | (exponent_field + kept));
}

// The exact fallback on a vec4, component by component.
fn exact_fma4(a: f32, xv: vec4f, yv: vec4f) -> vec4f {
  var r: vec4f;
  for (var j = 0u; j < 4u; j++) {
    r[j] = exact_fma(a, xv[j], yv[j]);
  }
  return r;
}
