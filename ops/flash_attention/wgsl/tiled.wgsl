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
// see, the part of a block past it (whole 16-key chunks) is not multiplied by v, a chunk on the
// diagonal adds each key only to the rows that see it (a hidden key's probability 0 times a NaN or
// infinite v would be NaN), and the tiles that walk the most blocks are started first.
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

// #include "tiled_functions.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tiled_setup.wgsl"

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

// #include "tiled_block_end.wgsl"
  }

// #include "tiled_finish.wgsl"
}
