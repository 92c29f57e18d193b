// flash_attention/tiled: the function of flash_attention/kernel (read its header first) with both
// products register-tiled as matmul's GEMMs are: every invocation owns the same 8 query rows in both.
//
// Workgroup: 128 query rows of one head, 256 invocations (tx = lid % 16, ty = lid / 16), the keys in
// blocks of KEYS = 64. Invocation (tx, ty) owns rows 4ty..4ty+3 ("top", row quad ty) and 64+4ty..
// ("bottom", row quad HALF + ty) of the tile, and per block:
// 1. scores: its 8 rows x keys tx, tx + 16, tx + 32, tx + 48 of the block in eight vec4 accumulators
//    (s_r: row r's four keys), over D taken 16 at a time: q's chunk (128 x 16, rows as they are in
//    memory) and k's (64 keys x 16, rows padded to 5 quads so that 16 invocations reading 16 keys hit
//    distinct banks) staged, a barrier, then per quad of d 8 + 4 vec4 reads (q's are shared by the 16
//    invocations of a row: broadcast) feed 128 FMAs;
// 2. softmax: scaled (masked only in a block that needs it: the additive mask, keys past S or keys
//    hidden by causal), each row's max over its four keys goes to `ab` and, after a barrier, every
//    invocation reads the 16 partial maxima of its rows: the 16 invocations of a row reach the same
//    new max, keep it in registers, turn their scores into probabilities exp(s - max) and write them
//    to `p_t` (key-major, quads of rows, padded to 33 quads per key: no bank conflicts); each keeps
//    the partial sum of its own keys, rescaled as the max grows, and the 16 partials of a row are
//    added once, at the end;
// 3. output: its 8 rows x column quads tx and 16 + tx of the dv tile (gemm_acc8x8.wgsl), rescaled by
//    exp(old max - new max), then v staged 16 keys at a time (a barrier) and per key two reads of
//    `p_t` and two of v feed 64 FMAs (gemm_fma8x8.wgsl), as matmul's k-steps do.
// Every chunk staged (q and k's, then v's) is loaded into registers one chunk ahead, coalesced, so
// that its loads are in flight during the previous chunk's products, and stored to workgroup memory
// before the barrier that opens its own. Under causal a tile stops at the last key its last row can
// see, the part of a block past it (whole 16-key chunks) is not multiplied by v, and the tiles that
// walk the most blocks are started first.
//
// Workgroup memory: p_t 64 keys x 33 quads, ab 512 quads (q's chunk, then the partial maxima or sums,
// then v's chunk), k_s 64 x 5 quads: 47,104 bytes, more than the 32 KiB most devices grant (the H200
// grants 48 KiB); the plan takes this kernel only where the device grants it.
//
// On the H200 (2026-12-02, harness/baselines/nvidia-h200-log/29-flash-bench.json): B = 1, H = 32,
// L = S = 4096, D = 128, causal, 6.45 ms, 21.3 TFLOP/s (staged: 9.08 ms). With its score products cut
// it ran 4.11 ms, its output products cut 4.61, both cut 2.23 (29-flash-ab2.txt). The same kernel with
// 64 rows and 128 invocations (30 KiB) ran 12.6 ms, and without loading chunks ahead 7.28
// (29-flash-ab1.txt).
//
// Masking as flash_attention/kernel: a dead score is LOWEST and weighs exactly 0; a row with no live
// key is zeros; rows past L read row L - 1 and write nothing; keys past S and d past D are staged
// as zeros.

// #include "flash_bindings.wgsl"

const ROWS = 128u;        // query rows per workgroup
const COLS = 128u;        // output columns per workgroup (more in z)
const KEYS = 64u;         // keys per block
const STEP = 16u;         // d per staged chunk of q and k; keys per staged chunk of v
const RQ = 32u;           // ROWS / 4: quads of rows
const HALF = 16u;         // RQ / 2: row quad of an invocation's bottom rows, relative to its top ones
const P_STRIDE = 33u;     // RQ + 1: quads per key in p_t
const K_STRIDE = 5u;      // quads per key in k_s: STEP / 4 and one of padding

var<workgroup> p_t: array<vec4f, 2112>; // KEYS * P_STRIDE: p_t[key * P_STRIDE + rq], rows 4rq..4rq+3
var<workgroup> ab: array<vec4f, 512>;   // q's chunk [ROWS][4]; partials [RQ][16]; v's chunk [STEP][32]
var<workgroup> k_s: array<vec4f, 320>;  // k's chunk [KEYS][K_STRIDE]

// #include "flash_store.wgsl"

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
  return select(vec4f(0.0), exp(s - vec4f(m)), s > vec4f(LOWEST));
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  // (row tile, head) pairs beyond 65,535 fold into y: pair = id.x + id.y * num_workgroups.x; z is the
  // tile of output columns. The last row tiles of every head first: under causal they walk the most
  // blocks, and started first they do not leave a tail of long workgroups at the end.
  let pair = wid.x + wid.y * grid.x;
  if (pair >= params.tiles * params.BH) {
    return;
  }
  let bh = pair % params.BH;
  let b = bh / params.H;
  let h = bh % params.H;
  let kv_base = kv_base_of(b, h / params.group); // key 0 of this head's K and V
  let q_base = q_base_of(b, h); // query row 0 of this head in q and out
  let row0 = (params.tiles - 1u - pair / params.BH) * ROWS;
  let last_row = min(row0 + ROWS, params.L) - 1u;
  // Keys this tile needs: all S, or under causal up to the last row's last visible key.
  var keys = i32(params.S);
  if (params.causal != 0u) {
    keys = clamp(i32(last_row) + params.offset + 1, 0, i32(params.S));
  }
  let blocks = (u32(keys) + KEYS - 1u) / KEYS;

  let tx = lid % 16u;
  let ty = lid / 16u;
  let row_top = row0 + 4u * ty;
  let row_bottom = row0 + ROWS / 2u + 4u * ty;
  let dv0 = wid.z * (COLS / 4u);
  let dv_left = dv0 + tx;
  let dv_right = dv0 + 16u + tx;

  // Running max of the 8 rows (shared by the row's 16 invocations) and the partial sums of this
  // invocation's keys.
  var max_top = vec4f(LOWEST);
  var max_bottom = vec4f(LOWEST);
  var sum_top = vec4f(0.0);
  var sum_bottom = vec4f(0.0);
// #include "gemm_acc8x8.wgsl"

  // What this invocation stages of the next chunk, loaded one chunk ahead: two vec4s of q's chunk and
  // one of k's (ab[lid], ab[lid + 256], k_s), then two of v's (ab[lid], ab[lid + 256]).
  var q_lo = load_q(q_base, row0, 0u, lid);
  var q_hi = load_q(q_base, row0, 0u, lid + 256u);
  var k_quad = load_k(kv_base, 0u, 0u, lid);
  var v_lo = vec4f(0.0);
  var v_hi = vec4f(0.0);

  for (var blk = 0u; blk < blocks; blk++) {
    let key0 = blk * KEYS;
    // ---- 1. scores: s_r holds row r's keys tx + 16c (component c); rows 0-3 top, 4-7 bottom
    var s0 = vec4f(0.0);
    var s1 = vec4f(0.0);
    var s2 = vec4f(0.0);
    var s3 = vec4f(0.0);
    var s4 = vec4f(0.0);
    var s5 = vec4f(0.0);
    var s6 = vec4f(0.0);
    var s7 = vec4f(0.0);
    for (var dq0 = 0u; dq0 < params.dq; dq0 += 4u) {
      ab[lid] = q_lo;
      ab[lid + 256u] = q_hi;
      k_s[(lid / 4u) * K_STRIDE + lid % 4u] = k_quad;
      // The next chunk's loads, in flight during this chunk's products: q and k's next quads, or after
      // the last of them v's first keys.
      if (dq0 + 4u < params.dq) {
        q_lo = load_q(q_base, row0, dq0 + 4u, lid);
        q_hi = load_q(q_base, row0, dq0 + 4u, lid + 256u);
        k_quad = load_k(kv_base, key0, dq0 + 4u, lid);
      } else {
        v_lo = load_v(kv_base, key0, dv0, lid);
        v_hi = load_v(kv_base, key0, dv0, lid + 256u);
      }
      workgroupBarrier();
      for (var e = 0u; e < 4u; e++) {
        let k0 = k_s[tx * K_STRIDE + e];
        let k1 = k_s[(tx + 16u) * K_STRIDE + e];
        let k2 = k_s[(tx + 32u) * K_STRIDE + e];
        let k3 = k_s[(tx + 48u) * K_STRIDE + e];
        s0 = qk(ab[(4u * ty) * 4u + e], k0, k1, k2, k3, s0);
        s1 = qk(ab[(4u * ty + 1u) * 4u + e], k0, k1, k2, k3, s1);
        s2 = qk(ab[(4u * ty + 2u) * 4u + e], k0, k1, k2, k3, s2);
        s3 = qk(ab[(4u * ty + 3u) * 4u + e], k0, k1, k2, k3, s3);
        s4 = qk(ab[(ROWS / 2u + 4u * ty) * 4u + e], k0, k1, k2, k3, s4);
        s5 = qk(ab[(ROWS / 2u + 4u * ty + 1u) * 4u + e], k0, k1, k2, k3, s5);
        s6 = qk(ab[(ROWS / 2u + 4u * ty + 2u) * 4u + e], k0, k1, k2, k3, s6);
        s7 = qk(ab[(ROWS / 2u + 4u * ty + 3u) * 4u + e], k0, k1, k2, k3, s7);
      }
      workgroupBarrier(); // ab and k_s are read
    }

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
      for (var j = 0u; j < STEP; j++) {
        let top = p_t[(kc + j) * P_STRIDE + ty];
        let bottom = p_t[(kc + j) * P_STRIDE + HALF + ty];
        let left = ab[j * 32u + tx];
        let right = ab[j * 32u + 16u + tx];
// #include "gemm_fma8x8.wgsl"
      }
      workgroupBarrier(); // ab is read
    }
  }

  // The 16 partial sums of each row, added: 1 / sum per row, 0 for a row with no live key.
  ab[ty * 16u + tx] = sum_top;
  ab[(HALF + ty) * 16u + tx] = sum_bottom;
  workgroupBarrier();
  var total_top = vec4f(0.0);
  var total_bottom = vec4f(0.0);
  for (var t = 0u; t < 16u; t++) {
    total_top += ab[ty * 16u + t];
    total_bottom += ab[(HALF + ty) * 16u + t];
  }
  let inv_top = select(1.0 / total_top, vec4f(0.0), total_top == vec4f(0.0));
  let inv_bottom = select(1.0 / total_bottom, vec4f(0.0), total_bottom == vec4f(0.0));
// #include "flash_store_acc.wgsl"
}
