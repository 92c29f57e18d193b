// The word path of the NVIDIA-layout int8 kernels (q8row.nvidia, q8row_rows64), for K % 16 != 0:
// one word of each of four rows (r0..r3, LANES invocations across K) at a time into a0..a3, and the
// last word of a row, whose high bytes are padding, read with the x lanes past K replaced by 0 so
// that neither the padding codes nor whatever follows x count. Needs MASK, MAGIC and BIAS.
    let words = (k + 3u) / 4u; // words per row
    let full = k / 4u; // words with no padding
    let b0 = r0 * words;
    let b1 = r1 * words;
    let b2 = r2 * words;
    let b3 = r3 * words;
    for (var j = lane; j < full; j += LANES) {
      let w0 = weight[(b0 + j) / 4u][(b0 + j) % 4u];
      let w1 = weight[(b1 + j) / 4u][(b1 + j) % 4u];
      let w2 = weight[(b2 + j) / 4u][(b2 + j) % 4u];
      let w3 = weight[(b3 + j) / 4u][(b3 + j) % 4u];
      let xv = x[j];
      a0 = fma((bitcast<vec4f>((vec4u(w0, w0, w0 >> 16u, w0 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a0);
      a1 = fma((bitcast<vec4f>((vec4u(w1, w1, w1 >> 16u, w1 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a1);
      a2 = fma((bitcast<vec4f>((vec4u(w2, w2, w2 >> 16u, w2 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a2);
      a3 = fma((bitcast<vec4f>((vec4u(w3, w3, w3 >> 16u, w3 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a3);
    }
    if (full < words && lane == full % LANES) {
      let w0 = weight[(b0 + full) / 4u][(b0 + full) % 4u];
      let w1 = weight[(b1 + full) / 4u][(b1 + full) % 4u];
      let w2 = weight[(b2 + full) / 4u][(b2 + full) % 4u];
      let w3 = weight[(b3 + full) / 4u][(b3 + full) % 4u];
      let xv = select(vec4f(0.0), x[full], vec4u(0u, 1u, 2u, 3u) < vec4u(k % 4u));
      a0 = fma((bitcast<vec4f>((vec4u(w0, w0, w0 >> 16u, w0 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a0);
      a1 = fma((bitcast<vec4f>((vec4u(w1, w1, w1 >> 16u, w1 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a1);
      a2 = fma((bitcast<vec4f>((vec4u(w2, w2, w2 >> 16u, w2 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a2);
      a3 = fma((bitcast<vec4f>((vec4u(w3, w3, w3 >> 16u, w3 >> 16u) & MASK) ^ MAGIC) - BIAS), xv, a3);
    }
