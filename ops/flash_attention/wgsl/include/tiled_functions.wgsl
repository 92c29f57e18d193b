// The functions of flash_attention's 128-row register-tiled kernels (tiled, buffered): a row's quad of
// d against four keys' (qk), the scores of a block that needs masking (finish_row), the chunk loads of
// q, k and v (zeros past L, S, D and Dv), and the softmax's small helpers. Needs the kernel's params and
// bindings (flash_bindings.wgsl) and LOWEST.
// Row `q`'s four d (one quad) times keys k0..k3's same four d, added into `acc` (the row's four keys):
// four vec4 FMAs, the keys' components regrouped (register names, no instructions).
fn qk(q: vec4f, k0: vec4f, k1: vec4f, k2: vec4f, k3: vec4f, acc: vec4f) -> vec4f {
  var s = fma(vec4f(q.x), vec4f(k0.x, k1.x, k2.x, k3.x), acc);
  s = fma(vec4f(q.y), vec4f(k0.y, k1.y, k2.y, k3.y), s);
  s = fma(vec4f(q.z), vec4f(k0.z, k1.z, k2.z, k3.z), s);
  return fma(vec4f(q.w), vec4f(k0.w, k1.w, k2.w, k3.w), s);
}

// The scores of row i and keys j from their dot products, in a block that needs masking: dot * scale
// plus the mask (rows past L read row L - 1's), or LOWEST where the key is dead (past S, or hidden by
// causal).
fn finish_row(dots: vec4f, b: u32, h: u32, i: u32, j: vec4u) -> vec4f {
  var s = dots * params.scale;
  if (params.masked != 0u) {
    let at = b * params.mask_b + h * params.mask_h + min(i, params.L - 1u) * params.mask_i;
    let last = params.S - 1u;
    s += vec4f(mask[at + min(j.x, last)], mask[at + min(j.y, last)], mask[at + min(j.z, last)],
               mask[at + min(j.w, last)]);
  }
  let hidden = vec4<bool>(params.causal != 0u) & (vec4<i32>(j) > vec4<i32>(i32(i) + params.offset));
  return select(s, vec4f(LOWEST), hidden | (j >= vec4u(params.S)));
}

// Vec4 i of q's chunk (query rows row0.. of the head whose row 0 is q_base, quads dq0..dq0 + 3, as
// [ROWS][4]): rows past L read row L - 1, quads past D are zeros.
fn load_q(q_base: u32, row0: u32, dq0: u32, i: u32) -> vec4f {
  let quad = dq0 + i % 4u;
  let at = (q_base + min(row0 + i / 4u, params.L - 1u) * params.q_step) * params.dq + min(quad, params.dq - 1u);
  return select(vec4f(0.0), q[at], quad < params.dq);
}

// Vec4 i of k's chunk (keys key0.., quads dq0..dq0 + 3, as [KEYS][4]): zeros past S and past D.
fn load_k(kv_base: u32, key0: u32, dq0: u32, i: u32) -> vec4f {
  let quad = dq0 + i % 4u;
  let key = key0 + i / 4u;
  let at = (kv_base + min(key, params.S - 1u) * params.kv_step) * params.dq + min(quad, params.dq - 1u);
  return select(vec4f(0.0), k[at], quad < params.dq && key < params.S);
}

// Vec4 i of v's chunk (keys key0..key0 + 15, quads dv0..dv0 + 31, as [STEP][32]): zeros past S and Dv.
fn load_v(kv_base: u32, key0: u32, dv0: u32, i: u32) -> vec4f {
  let key = key0 + i / 32u;
  let quad = dv0 + i % 32u;
  let at = (kv_base + min(key, params.S - 1u) * params.kv_step) * params.dvq + min(quad, params.dvq - 1u);
  return select(vec4f(0.0), v[at], key < params.S && quad < params.dvq);
}

fn max4(x: vec4f) -> f32 {
  return max(max(x.x, x.y), max(x.z, x.w));
}

fn sum4(x: vec4f) -> f32 {
  return (x.x + x.y) + (x.z + x.w);
}

// exp(s - m) for a row's four scores, 0 where the score is dead.
fn weigh(s: vec4f, m: f32) -> vec4f {
  return select(vec4f(0.0), exp(s - vec4f(m)), live4(s));
}
