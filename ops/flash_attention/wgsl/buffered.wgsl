// flash_attention/buffered: flash_attention/tiled (read its header first) with q's and k's chunks
// double-buffered, so that the score phase takes one barrier per chunk instead of two.
//
// In /tiled every staged chunk costs two barriers: one after its stores (the chunk is visible) and one
// after its products (its buffer may be overwritten). Here the score phase's chunks alternate between
// two buffers: while the products of chunk c read buffer c % 2, the invocations store chunk c + 1
// (loaded into registers one chunk ahead, as in /tiled) into the other, which every invocation finished
// reading at the barrier that closed chunk c - 1; one barrier per chunk then both publishes chunk c + 1
// and frees buffer c % 2. At D = 128 a block takes 19 barriers instead of 26 (8 chunks of q and k: 9
// instead of 16; v's 4 chunks and the softmax's 2 as in /tiled).
//
// The two buffers (q's chunk [ROWS][4] and k's [KEYS][K_STRIDE], 832 quads each) live in `p_t`, which
// holds probabilities only between the softmax and the end of the output phase: the score phase's last
// barrier precedes the softmax's first write to p_t, and the output phase's last barrier precedes the
// next block's first store. Workgroup memory: p_t 64 keys x 33 quads and ab 512 quads: 41,984 bytes
// (/tiled: 47,104), more than the 32 KiB most devices grant; the plan takes /tiled by default, this
// kernel only when named (its speed against /tiled is to be measured).

// #include "flash_bindings.wgsl"

const ROWS = 128u;        // query rows per workgroup
const COLS = 128u;        // output columns per workgroup (more in z)
const KEYS = 64u;         // keys per block
const STEP = 16u;         // d per staged chunk of q and k; keys per staged chunk of v
const RQ = 32u;           // ROWS / 4: quads of rows
const HALF = 16u;         // RQ / 2: row quad of an invocation's bottom rows, relative to its top ones
const P_STRIDE = 33u;     // RQ + 1: quads per key in p_t
const K_STRIDE = 5u;      // quads per key in k_s: STEP / 4 and one of padding

const BUFFER = 832u;       // quads of one staging buffer in p_t: q's chunk (ROWS * 4), then k's
const K_AT = 512u;        // where k's chunk [KEYS][K_STRIDE] starts in a staging buffer

var<workgroup> p_t: array<vec4f, 2112>; // KEYS * P_STRIDE: p_t[key * P_STRIDE + rq], rows 4rq..4rq+3;
                                        // in phase 1, the two staging buffers at 0 and BUFFER
var<workgroup> ab: array<vec4f, 512>;   // partials [RQ][16]; v's chunk [STEP][32]

// #include "flash_store.wgsl"

// #include "tiled_functions.wgsl"

// Stores this invocation's share of a chunk of q (two vec4s) and of k (one) into the staging buffer at
// `at` of p_t: q's [ROWS][4], k's [KEYS][K_STRIDE] after it.
fn stage(at: u32, lid: u32, q_lo: vec4f, q_hi: vec4f, k_quad: vec4f) {
  p_t[at + lid] = q_lo;
  p_t[at + lid + 256u] = q_hi;
  p_t[at + K_AT + (lid / 4u) * K_STRIDE + lid % 4u] = k_quad;
}

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
    // Chunk 0 (in registers since the previous block's output phase) into buffer 0, chunk 1's loads
    // (or, with one chunk, v's first keys) in flight.
    let chunks = (params.dq + 3u) / 4u;
    stage(0u, lid, q_lo, q_hi, k_quad);
    if (chunks > 1u) {
      q_lo = load_q(q_base, row0, 4u, lid);
      q_hi = load_q(q_base, row0, 4u, lid + 256u);
      k_quad = load_k(kv_base, key0, 4u, lid);
    } else {
      v_lo = load_v(kv_base, key0, dv0, lid);
      v_hi = load_v(kv_base, key0, dv0, lid + 256u);
    }
    workgroupBarrier();
    for (var c = 0u; c < chunks; c++) {
      // Chunk c + 1 into the other buffer (read by nobody since the barrier that closed chunk c - 1),
      // and the loads of chunk c + 2, or after the last chunk v's first keys.
      if (c + 1u < chunks) {
        stage(((c + 1u) % 2u) * BUFFER, lid, q_lo, q_hi, k_quad);
        if (c + 2u < chunks) {
          q_lo = load_q(q_base, row0, 4u * (c + 2u), lid);
          q_hi = load_q(q_base, row0, 4u * (c + 2u), lid + 256u);
          k_quad = load_k(kv_base, key0, 4u * (c + 2u), lid);
        } else {
          v_lo = load_v(kv_base, key0, dv0, lid);
          v_hi = load_v(kv_base, key0, dv0, lid + 256u);
        }
      }
      let q_at = (c % 2u) * BUFFER;
      let k_at = q_at + K_AT;
      for (var e = 0u; e < 4u; e++) {
        let k0 = p_t[k_at + tx * K_STRIDE + e];
        let k1 = p_t[k_at + (tx + 16u) * K_STRIDE + e];
        let k2 = p_t[k_at + (tx + 32u) * K_STRIDE + e];
        let k3 = p_t[k_at + (tx + 48u) * K_STRIDE + e];
        s0 = qk(p_t[q_at + (4u * ty) * 4u + e], k0, k1, k2, k3, s0);
        s1 = qk(p_t[q_at + (4u * ty + 1u) * 4u + e], k0, k1, k2, k3, s1);
        s2 = qk(p_t[q_at + (4u * ty + 2u) * 4u + e], k0, k1, k2, k3, s2);
        s3 = qk(p_t[q_at + (4u * ty + 3u) * 4u + e], k0, k1, k2, k3, s3);
        s4 = qk(p_t[q_at + (ROWS / 2u + 4u * ty) * 4u + e], k0, k1, k2, k3, s4);
        s5 = qk(p_t[q_at + (ROWS / 2u + 4u * ty + 1u) * 4u + e], k0, k1, k2, k3, s5);
        s6 = qk(p_t[q_at + (ROWS / 2u + 4u * ty + 2u) * 4u + e], k0, k1, k2, k3, s6);
        s7 = qk(p_t[q_at + (ROWS / 2u + 4u * ty + 3u) * 4u + e], k0, k1, k2, k3, s7);
      }
      workgroupBarrier(); // chunk c + 1 is stored, buffer c % 2 is read
    }

// #include "tiled_block_end.wgsl"
  }

// #include "tiled_finish.wgsl"
}
