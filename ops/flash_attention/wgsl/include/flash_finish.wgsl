// The scores of rows i0 .. i0 + 3 (rows past L read row L - 1's mask) and key j of head (b, h), from
// their dot products: dot * scale plus the mask, or LOWEST where the key is dead (past S, or hidden by
// causal).
fn finish(dots: vec4f, b: u32, h: u32, i0: u32, j: u32) -> vec4f {
  var s = dots * params.scale;
  if (params.masked != 0u) {
    let at = b * params.mask_b + h * params.mask_h + min(j, params.S - 1u);
    let last = params.L - 1u;
    s += vec4f(mask[at + min(i0, last) * params.mask_i], mask[at + min(i0 + 1u, last) * params.mask_i],
               mask[at + min(i0 + 2u, last) * params.mask_i], mask[at + min(i0 + 3u, last) * params.mask_i]);
  }
  let rows = vec4<i32>(i32(i0)) + vec4<i32>(0, 1, 2, 3) + vec4<i32>(params.offset);
  let hidden = vec4<bool>(params.causal != 0u) & (vec4<i32>(i32(j)) > rows);
  return select(s, vec4f(LOWEST), hidden | vec4<bool>(j >= params.S));
}
