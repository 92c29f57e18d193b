// flash_attention/wide: the function of flash_attention/kernel (read its header first) for wide value
// heads: 512 output columns per workgroup instead of 128, so that a Dv of up to 512 (a VAE's single
// head of 512 channels, or 384) takes one workgroup per row tile and its scores are computed once. The
// 128-column kernels take ceil(Dv / 128) workgroups per row tile, each computing every score again:
// at D = Dv = 512 that is 4 score products and 1 output product of work for 1 and 1 of result.
//
// The price is rows: 512 columns x 8 x 8 outputs per invocation leave 32 query rows per workgroup
// (tiled takes 128), so each staged key serves 32 rows, and each invocation's score tile is 8 rows x 1
// key instead of 8 x 4 (32 FMAs per quad of d for 9 reads of workgroup memory, where tiled does 128
// for 12). Both products are register-tiled as in /tiled, with the same row ownership in both:
// Workgroup: 32 query rows of one head, 256 invocations (tx = lid % 64, ty = lid / 64), keys in blocks
// of KEYS = 64. Invocation (tx, ty) owns rows 4ty..4ty+3 ("top", row quad ty) and 16+4ty.. ("bottom",
// row quad HALF + ty), and per block:
// 1. scores: its 8 rows x key tx of the block in two vec4 accumulators (s_top, s_bottom), over D
//    taken 32 at a time: q's chunk (32 rows x 8 quads) and k's (64 keys x 8 quads, rows padded to 9
//    quads: bank-conflict free) staged in `ab`, a barrier, then per quad of d 8 broadcast reads of q
//    and one of k feed 8 dot products;
// 2. softmax: scaled (masked only in a block that needs it, through finish(): the additive mask, keys
//    past S, keys hidden by causal), each invocation's scores are its rows' partial maxima: after a
//    barrier every invocation reads the 64 of its 8 rows, keeps the new max in registers, writes its
//    probabilities exp(s - max) to `p_t` (key-major, quads of rows, 9 quads per key) and keeps the
//    partial sum of its key per row, rescaled as the max grows; the 64 partial sums of a row are
//    added once, at the end;
// 3. output: its 8 rows x column quads tx and 64 + tx of the 512-column tile (gemm_acc8x8.wgsl),
//    rescaled by exp(old max - new max), then v staged 8 keys x 128 quads at a time in `ab` (a
//    barrier) and per key two reads of `p_t` and two of v feed 64 FMAs (gemm_fma8x8.wgsl).
// Every chunk staged is loaded into registers one chunk ahead, as in /tiled. A Dv over 512 takes
// more workgroups in z (each computing the scores again); columns past Dv are zeros, not stored.
//
// Workgroup memory: p_t 64 keys x 9 quads, ab 1024 quads (q's and k's chunks, then the partial maxima
// or sums, then v's chunk): 25,600 bytes, within the 32 KiB most devices grant.
//
// Masking as flash_attention/kernel: a dead score is LOWEST and weighs exactly 0; a row with no live
// key is zeros; rows past L read row L - 1 and write nothing; keys past S and d past D are staged as
// zeros. Under causal a tile stops at the last key its last row can see, a chunk of v on the diagonal
// adds each key only to the rows that see it (a hidden key's probability 0 times a NaN or infinite v
// would be NaN), and the tiles that walk the most blocks are started first.

// #include "flash_bindings.wgsl"

const ROWS = 32u;        // query rows per workgroup
const COLS = 512u;       // output columns per workgroup (more in z)
const KEYS = 64u;        // keys per block
const STEP = 8u;         // quads of d per staged chunk of q and k
const V_STEP = 8u;       // keys per staged chunk of v
const OUT_QUADS = 128u;  // COLS / 4
const HALF = 4u;         // row quad of an invocation's bottom rows, relative to its top ones
const P_STRIDE = 9u;     // quads per key in p_t: ROWS / 4 and one of padding
const K_STRIDE = 9u;     // quads per key in k's chunk: STEP and one of padding
const K_AT = 256u;       // where k's chunk starts in ab (after q's, ROWS * STEP)

var<workgroup> p_t: array<vec4f, 576>; // KEYS * P_STRIDE: p_t[key * P_STRIDE + rq], rows 4rq..4rq+3
var<workgroup> ab: array<vec4f, 1024>; // q's chunk [ROWS][STEP], k's [KEYS][K_STRIDE] at K_AT; partials
                                       // [8 row quads][64]; v's chunk [V_STEP][OUT_QUADS]

// #include "flash_finish.wgsl"

// #include "flash_store.wgsl"

// Vec4 i of q's chunk (query rows row0.. of the head whose row 0 is q_base, quads dq0..dq0 + 7, as
// [ROWS][STEP]): rows past L read row L - 1, quads past D are zeros.
fn load_q(q_base: u32, row0: u32, dq0: u32, i: u32) -> vec4f {
  let quad = dq0 + i % STEP;
  let at = (q_base + min(row0 + i / STEP, params.L - 1u) * params.q_step) * params.dq + min(quad, params.dq - 1u);
  return select(vec4f(0.0), q[at], quad < params.dq);
}

// Vec4 i of k's chunk (keys key0.., quads dq0..dq0 + 7, as [KEYS][STEP]): zeros past S and past D.
fn load_k(kv_base: u32, key0: u32, dq0: u32, i: u32) -> vec4f {
  let quad = dq0 + i % STEP;
  let key = key0 + i / STEP;
  let at = (kv_base + min(key, params.S - 1u) * params.kv_step) * params.dq + min(quad, params.dq - 1u);
  return select(vec4f(0.0), k[at], quad < params.dq && key < params.S);
}

// Vec4 i of v's chunk (keys key0..key0 + 7, quads dv0..dv0 + 127, as [V_STEP][OUT_QUADS]): zeros past
// S and Dv.
fn load_v(kv_base: u32, key0: u32, dv0: u32, i: u32) -> vec4f {
  let key = key0 + i / OUT_QUADS;
  let quad = dv0 + i % OUT_QUADS;
  let at = (kv_base + min(key, params.S - 1u) * params.kv_step) * params.dvq + min(quad, params.dvq - 1u);
  return select(vec4f(0.0), v[at], key < params.S && quad < params.dvq);
}

// Where vec4 i of k's chunk is staged in ab: key i / STEP, quad i % STEP, rows padded to K_STRIDE.
fn k_slot(i: u32) -> u32 {
  return K_AT + (i / STEP) * K_STRIDE + i % STEP;
}

// Four rows' quad of d (q0..q3) against one key's same quad: the four dot products.
fn dots(q0: vec4f, q1: vec4f, q2: vec4f, q3: vec4f, kq: vec4f) -> vec4f {
  return vec4f(dot(q0, kq), dot(q1, kq), dot(q2, kq), dot(q3, kq));
}

// exp(s - m) per row (four rows' scores of one key against their maxima), 0 where the score is dead.
fn weigh(s: vec4f, m: vec4f) -> vec4f {
  return select(vec4f(0.0), exp(s - m), live4(s));
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  // (row tile, head) pairs beyond 65,535 fold into y: pair = id.x + id.y * num_workgroups.x; z is the
  // tile of output columns. The last row tiles of every head first (under causal they walk the most
  // blocks).
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

  let tx = lid % 64u;
  let ty = lid / 64u;
  let row_top = row0 + 4u * ty;
  let row_bottom = row0 + ROWS / 2u + 4u * ty;
  let dv0 = wid.z * OUT_QUADS;
  let dv_left = dv0 + tx;
  let dv_right = dv0 + 64u + tx;

  // Running max of the 8 rows (shared by the rows' 64 invocations) and this invocation's partial sums.
  var max_top = vec4f(LOWEST);
  var max_bottom = vec4f(LOWEST);
  var sum_top = vec4f(0.0);
  var sum_bottom = vec4f(0.0);
// #include "gemm_acc8x8.wgsl"

  // What this invocation stages of the next chunk, loaded one chunk ahead: one vec4 of q's chunk and
  // two of k's, then four of v's.
  var q_quad = load_q(q_base, row0, 0u, lid);
  var k_lo = load_k(kv_base, 0u, 0u, lid);
  var k_hi = load_k(kv_base, 0u, 0u, lid + 256u);
  var v0 = vec4f(0.0);
  var v1 = vec4f(0.0);
  var v2 = vec4f(0.0);
  var v3 = vec4f(0.0);

  for (var blk = 0u; blk < blocks; blk++) {
    let key0 = blk * KEYS;
    // ---- 1. scores of rows 4ty.. (top) and 16 + 4ty.. (bottom) against key key0 + tx
    var s_top = vec4f(0.0);
    var s_bottom = vec4f(0.0);
    for (var dq0 = 0u; dq0 < params.dq; dq0 += STEP) {
      ab[lid] = q_quad;
      ab[k_slot(lid)] = k_lo;
      ab[k_slot(lid + 256u)] = k_hi;
      // The next chunk's loads, in flight during this chunk's products: q and k's next quads, or after
      // the last of them v's first keys.
      if (dq0 + STEP < params.dq) {
        q_quad = load_q(q_base, row0, dq0 + STEP, lid);
        k_lo = load_k(kv_base, key0, dq0 + STEP, lid);
        k_hi = load_k(kv_base, key0, dq0 + STEP, lid + 256u);
      } else {
        v0 = load_v(kv_base, key0, dv0, lid);
        v1 = load_v(kv_base, key0, dv0, lid + 256u);
        v2 = load_v(kv_base, key0, dv0, lid + 512u);
        v3 = load_v(kv_base, key0, dv0, lid + 768u);
      }
      workgroupBarrier();
      for (var e = 0u; e < STEP; e++) {
        let kq = ab[K_AT + tx * K_STRIDE + e];
        let top = (4u * ty) * STEP + e;
        let bottom = (ROWS / 2u + 4u * ty) * STEP + e;
        s_top += dots(ab[top], ab[top + STEP], ab[top + 2u * STEP], ab[top + 3u * STEP], kq);
        s_bottom += dots(ab[bottom], ab[bottom + STEP], ab[bottom + 2u * STEP], ab[bottom + 3u * STEP], kq);
      }
      workgroupBarrier(); // ab is read
    }

    // ---- 2. softmax; only a block with a mask, keys past S or keys hidden by causal is masked
    let edge = params.masked != 0u || key0 + KEYS > params.S ||
      (params.causal != 0u && i32(key0 + KEYS - 1u) > i32(row0) + params.offset);
    if (edge) {
      s_top = finish(s_top, b, h, row_top, key0 + tx);
      s_bottom = finish(s_bottom, b, h, row_bottom, key0 + tx);
    } else {
      s_top *= params.scale;
      s_bottom *= params.scale;
    }
    ab[ty * 64u + tx] = s_top;
    ab[(HALF + ty) * 64u + tx] = s_bottom;
    workgroupBarrier();
    var new_top = max_top;
    var new_bottom = max_bottom;
    for (var t = 0u; t < 64u; t++) {
      new_top = max(new_top, ab[ty * 64u + t]);
      new_bottom = max(new_bottom, ab[(HALF + ty) * 64u + t]);
    }
    let f_top = exp(max_top - new_top);
    let f_bottom = exp(max_bottom - new_bottom);
    max_top = new_top;
    max_bottom = new_bottom;
    let p_top = weigh(s_top, new_top);
    let p_bottom = weigh(s_bottom, new_bottom);
    sum_top = sum_top * f_top + p_top;
    sum_bottom = sum_bottom * f_bottom + p_bottom;
    p_t[tx * P_STRIDE + ty] = p_top;
    p_t[tx * P_STRIDE + HALF + ty] = p_bottom;
// #include "flash_rescale_acc.wgsl"
    workgroupBarrier(); // p_t is written, the partial maxima in ab are read

    // ---- 3. output += p v, 8 keys of v at a time, up to the last key the tile needs (a chunk's keys
    // past it have p = 0 and are left out with the diagonal's hidden keys; v is staged as zeros past S)
    let in_block = min(KEYS, u32(keys) - key0);
    for (var kc = 0u; kc < in_block; kc += V_STEP) {
      ab[lid] = v0;
      ab[lid + 256u] = v1;
      ab[lid + 512u] = v2;
      ab[lid + 768u] = v3;
      // The next chunk's loads: v's next keys, or after the last of them the next block's q and k.
      if (kc + V_STEP < in_block) {
        v0 = load_v(kv_base, key0 + kc + V_STEP, dv0, lid);
        v1 = load_v(kv_base, key0 + kc + V_STEP, dv0, lid + 256u);
        v2 = load_v(kv_base, key0 + kc + V_STEP, dv0, lid + 512u);
        v3 = load_v(kv_base, key0 + kc + V_STEP, dv0, lid + 768u);
      } else {
        q_quad = load_q(q_base, row0, 0u, lid);
        k_lo = load_k(kv_base, key0 + KEYS, 0u, lid);
        k_hi = load_k(kv_base, key0 + KEYS, 0u, lid + 256u);
      }
      workgroupBarrier();
      // A chunk whose keys every row of this invocation sees takes the plain products; one on a causal
      // tile's diagonal (its keys past the tile's last included) adds each key only to the rows that
      // see it (flash_add_pv_seen.wgsl).
      if (seen_by(row_top, key0 + kc, V_STEP) == V_STEP) {
        for (var j = 0u; j < V_STEP; j++) {
          let top = p_t[(kc + j) * P_STRIDE + ty];
          let bottom = p_t[(kc + j) * P_STRIDE + HALF + ty];
          let left = ab[j * OUT_QUADS + tx];
          let right = ab[j * OUT_QUADS + 64u + tx];
// #include "gemm_fma8x8.wgsl"
        }
      } else {
        for (var j = 0u; j < V_STEP; j++) {
          let top = p_t[(kc + j) * P_STRIDE + ty];
          let bottom = p_t[(kc + j) * P_STRIDE + HALF + ty];
          let left = ab[j * OUT_QUADS + tx];
          let right = ab[j * OUT_QUADS + 64u + tx];
          let seen_top = sees(row_top, key0 + kc + j);
          let seen_bottom = sees(row_bottom, key0 + kc + j);
// #include "flash_add_pv_seen.wgsl"
        }
      }
      workgroupBarrier(); // ab is read
    }
  }

  // The 64 partial sums of each row, added: 1 / sum per row, 0 for a row with no live key.
  ab[ty * 64u + tx] = sum_top;
  ab[(HALF + ty) * 64u + tx] = sum_bottom;
  workgroupBarrier();
  var total_top = vec4f(0.0);
  var total_bottom = vec4f(0.0);
  for (var t = 0u; t < 64u; t++) {
    total_top += ab[ty * 64u + t];
    total_bottom += ab[(HALF + ty) * 64u + t];
  }
  let inv_top = select(1.0 / total_top, vec4f(0.0), total_top == vec4f(0.0));
  let inv_bottom = select(1.0 / total_bottom, vec4f(0.0), total_bottom == vec4f(0.0));
// #include "flash_store_acc.wgsl"
}
