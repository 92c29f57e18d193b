// The functions every dp4a kernel shares (q8row_dp4a, q4g128_dp4a and their _tile64 kernels): the
// activations' loads and the dot products. Needs the kernel's a, a_scales and params.
// Word w of row m of the packed activations (codes 4w .. 4w + 3), with the codes past K in a row's
// last word as zeros (so whatever the weight holds there adds nothing), or 0 outside a.
fn load_a(m: u32, w: u32) -> u32 {
  let words = (params.k + 3u) / 4u;
  if (m >= params.m || w >= words) {
    return 0u;
  }
  let word = a[m * words + w];
  let valid = params.k - 4u * w; // codes of this word inside K, >= 1
  return select(word, word & ((1u << (8u * valid)) - 1u), valid < 4u);
}

// The four i32 dot products of one word of a row of a with one word of each of four weight rows.
fn dot_row(a_word: u32, w_words: vec4u) -> vec4i {
  return vec4i(
    dot4I8Packed(a_word, w_words.x),
    dot4I8Packed(a_word, w_words.y),
    dot4I8Packed(a_word, w_words.z),
    dot4I8Packed(a_word, w_words.w),
  );
}

// Row m's activation scale, or 0 outside a.
fn load_a_scale(m: u32) -> f32 {
  if (m < params.m) {
    return a_scales[m];
  }
  return 0.0;
}
