// Phases 2 and 3 of a block in flash_attention's 128-row register-tiled kernels (tiled, buffered), once
// the block's scores s0..s7 are summed over D: the softmax (the block's row maxima through `ab`, the
// probabilities into `p_t`, the accumulators rescaled) and the output products, v staged 16 keys at a
// time in `ab`, the last chunk's loads being the next block's first chunk of q and k. Needs main's
// names (tiled_setup.wgsl), key0 and s0..s7 of the block, and the kernel's `ab` and `p_t`, KEYS, STEP,
// HALF and P_STRIDE. Ends with a barrier after which `p_t` and `ab` are free.
    // ---- 2. softmax; only a block with a mask, keys past S or keys hidden by causal is masked
    let edge = params.masked != 0u || key0 + KEYS > params.S ||
      (params.causal != 0u && i32(key0 + KEYS - 1u) > i32(row0) + params.offset);
    if (edge) {
      let j = vec4u(key0 + tx) + vec4u(0u, 16u, 32u, 48u);
      s0 = finish_row(s0, b, h, row_top, j);
      s1 = finish_row(s1, b, h, row_top + 1u, j);
      s2 = finish_row(s2, b, h, row_top + 2u, j);
      s3 = finish_row(s3, b, h, row_top + 3u, j);
      s4 = finish_row(s4, b, h, row_bottom, j);
      s5 = finish_row(s5, b, h, row_bottom + 1u, j);
      s6 = finish_row(s6, b, h, row_bottom + 2u, j);
      s7 = finish_row(s7, b, h, row_bottom + 3u, j);
    } else {
      s0 *= params.scale;
      s1 *= params.scale;
      s2 *= params.scale;
      s3 *= params.scale;
      s4 *= params.scale;
      s5 *= params.scale;
      s6 *= params.scale;
      s7 *= params.scale;
    }
    ab[ty * 16u + tx] = vec4f(max4(s0), max4(s1), max4(s2), max4(s3));
    ab[(HALF + ty) * 16u + tx] = vec4f(max4(s4), max4(s5), max4(s6), max4(s7));
    workgroupBarrier();
    var new_top = max_top;
    var new_bottom = max_bottom;
    for (var t = 0u; t < 16u; t++) {
      new_top = max(new_top, ab[ty * 16u + t]);
      new_bottom = max(new_bottom, ab[(HALF + ty) * 16u + t]);
    }
    let f_top = exp(max_top - new_top);
    let f_bottom = exp(max_bottom - new_bottom);
    max_top = new_top;
    max_bottom = new_bottom;
    let p0 = weigh(s0, new_top.x);
    let p1 = weigh(s1, new_top.y);
    let p2 = weigh(s2, new_top.z);
    let p3 = weigh(s3, new_top.w);
    let p4 = weigh(s4, new_bottom.x);
    let p5 = weigh(s5, new_bottom.y);
    let p6 = weigh(s6, new_bottom.z);
    let p7 = weigh(s7, new_bottom.w);
    sum_top = sum_top * f_top + vec4f(sum4(p0), sum4(p1), sum4(p2), sum4(p3));
    sum_bottom = sum_bottom * f_bottom + vec4f(sum4(p4), sum4(p5), sum4(p6), sum4(p7));
    p_t[tx * P_STRIDE + ty] = vec4f(p0.x, p1.x, p2.x, p3.x);
    p_t[tx * P_STRIDE + HALF + ty] = vec4f(p4.x, p5.x, p6.x, p7.x);
    p_t[(tx + 16u) * P_STRIDE + ty] = vec4f(p0.y, p1.y, p2.y, p3.y);
    p_t[(tx + 16u) * P_STRIDE + HALF + ty] = vec4f(p4.y, p5.y, p6.y, p7.y);
    p_t[(tx + 32u) * P_STRIDE + ty] = vec4f(p0.z, p1.z, p2.z, p3.z);
    p_t[(tx + 32u) * P_STRIDE + HALF + ty] = vec4f(p4.z, p5.z, p6.z, p7.z);
    p_t[(tx + 48u) * P_STRIDE + ty] = vec4f(p0.w, p1.w, p2.w, p3.w);
    p_t[(tx + 48u) * P_STRIDE + HALF + ty] = vec4f(p4.w, p5.w, p6.w, p7.w);
// #include "flash_rescale_acc.wgsl"
    workgroupBarrier(); // p_t is written, the partial maxima in ab are read

    // ---- 3. output += p v, 16 keys of v at a time, up to the last key the tile needs
    let in_block = min(KEYS, u32(keys) - key0);
    for (var kc = 0u; kc < in_block; kc += STEP) {
      ab[lid] = v_lo;
      ab[lid + 256u] = v_hi;
      // The next chunk's loads: v's next keys, or after the last of them the next block's q and k.
      if (kc + STEP < in_block) {
        v_lo = load_v(kv_base, key0 + kc + STEP, dv0, lid);
        v_hi = load_v(kv_base, key0 + kc + STEP, dv0, lid + 256u);
      } else {
        q_lo = load_q(q_base, row0, 0u, lid);
        q_hi = load_q(q_base, row0, 0u, lid + 256u);
        k_quad = load_k(kv_base, key0 + KEYS, 0u, lid);
      }
      workgroupBarrier();
      // A chunk whose keys every row of this invocation sees takes the plain products; one on a causal
      // tile's diagonal (its keys past the tile's last included) adds each key only to the rows that
      // see it (flash_add_pv_seen.wgsl).
      if (seen_by(row_top, key0 + kc, STEP) == STEP) {
        for (var j = 0u; j < STEP; j++) {
          let top = p_t[(kc + j) * P_STRIDE + ty];
          let bottom = p_t[(kc + j) * P_STRIDE + HALF + ty];
          let left = ab[j * 32u + tx];
          let right = ab[j * 32u + 16u + tx];
// #include "gemm_fma8x8.wgsl"
        }
      } else {
        for (var j = 0u; j < STEP; j++) {
          let top = p_t[(kc + j) * P_STRIDE + ty];
          let bottom = p_t[(kc + j) * P_STRIDE + HALF + ty];
          let left = ab[j * 32u + tx];
          let right = ab[j * 32u + 16u + tx];
          let seen_top = sees(row_top, key0 + kc + j);
          let seen_bottom = sees(row_bottom, key0 + kc + j);
// #include "flash_add_pv_seen.wgsl"
        }
      }
      workgroupBarrier(); // ab is read
    }
