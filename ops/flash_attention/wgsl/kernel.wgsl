// flash_attention/kernel: out = softmax(q k^T * scale + mask) v in one dispatch, the [L, S] score
// matrix never stored: each workgroup walks the keys of one head in blocks and keeps a running
// (max, sum) per query row (online softmax, FlashAttention), rescaling its output when the max grows.
// q [B, H, L, D], k [B, H / group, S, D], v [B, H / group, S, Dv], out [B, H, L, Dv], or all four
// token-major ([B, L, H, D], [B, S, H / group, D], ...: the strides of flash_bindings.wgsl); query head
// h reads KV head h / group (contiguous groups, torch's enable_gqa). D % 4 == 0 and Dv % 4 == 0: every
// row is read and written as vec4s ("quads").
//
// Workgroup (row tile and b * H + h, folded into x and y; dv tile in z): 128 query rows, one block of 31 keys at a time, 128 output
// columns (a larger Dv takes more workgroups in z, each recomputing the scores). Its 256 invocations
// take three roles in turn, one block at a time, with two barriers per phase boundary:
// 1. scores: invocation (a = lid / 8, c = lid % 8) computes rows 4a..4a+3 x keys 4c..4c+3 of the
//    block (16 dot products over D, four vec4 loads of q and four of k per quad of D: 64 FMAs), reading
//    q and k straight from memory (the tile of q is re-read from L1/L2 for every block, never staged),
//    scales, masks, and writes them to `pt`, the block's scores transposed (slot j = key j of the
//    block, 32 quads of rows);
// 2. statistics: invocation r < 128 owns query row r for the whole dispatch: it reads its row's 31
//    scores, raises its running max, turns them into probabilities exp(s - max) in place, and writes
//    the factor exp(old max - new max) into slot 31 of `pt`;
// 3. output: invocation (tx = lid % 16, ty = lid / 16) owns rows 4ty..4ty+3 and 64+4ty..64+4ty+3 by
//    columns 4tx..4tx+3 and 64+4tx..64+4tx+3 of the dv tile: 8 x 8 outputs in sixteen named vec4
//    accumulators, rescaled by slot 31, then per key two vec4 reads of `pt` and two vec4 loads of v
//    feed 64 FMAs.
// `pt` is 32 slots x 128 rows of f32, 16 KiB: WebGPU's default maxComputeWorkgroupStorageSize, so the
// kernel runs on every device. That is why a block is 31 keys, not 32: slot 31 carries the factors.
// On the H200 this kernel's score loop is most of its time (see mod.ts); flash_attention/staged takes K
// and V through another 16 KiB of workgroup memory where the device grants it.
//
// Masking: a score that is dead (a key past S, a key after row i + offset under `causal`) is set to
// LOWEST; any score <= LOWEST (a mask of -inf included) counts as dead: it contributes exactly 0 and
// does not raise the max. A row with no live key ends with sum 0 and is written as zeros (SDPA's safe
// softmax). Under `causal` a tile stops at the last key its last row can see, and on its diagonal a row
// leaves the keys it does not see out of its p v (their probability 0 times a NaN or infinite v would
// be NaN); the keys of a block that all of an invocation's rows see take the plain products.
// Rows past L read row L - 1 and write nothing; keys past S read key S - 1 and are dead.

// #include "flash_bindings.wgsl"

const ROWS = 128u;  // query rows per workgroup
const COLS = 128u;  // output columns per workgroup (more in z)
const KEYS = 31u;   // keys per block; slot KEYS of `pt` holds the rescale factors
const QUADS = 32u;  // ROWS / 4: quads of rows per slot

var<workgroup> pt: array<vec4f, 1024>; // 32 slots x QUADS

// #include "flash_finish.wgsl"

// #include "flash_statistics.wgsl"

// #include "flash_store.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "flash_setup.wgsl"
  // The quads of v the output role reads (a column past Dv reads the last one and is not stored).
  let v_left = min(dv_left, params.dvq - 1u);
  let v_right = min(dv_right, params.dvq - 1u);
// #include "gemm_acc8x8.wgsl"

  for (var blk = 0u; blk < blocks; blk++) {
    let key0 = blk * KEYS;
    // ---- 1. scores of rows 4a..4a+3 x keys key0 + 4c .. key0 + 4c + 3
    let j0 = key0 + 4u * c;
    let k0 = (kv_base + min(j0, params.S - 1u) * params.kv_step) * params.dq;
    let k1 = (kv_base + min(j0 + 1u, params.S - 1u) * params.kv_step) * params.dq;
    let k2 = (kv_base + min(j0 + 2u, params.S - 1u) * params.kv_step) * params.dq;
    let k3 = (kv_base + min(j0 + 3u, params.S - 1u) * params.kv_step) * params.dq;
    var s0 = vec4f(0.0); // key j0 for the four rows
    var s1 = vec4f(0.0);
    var s2 = vec4f(0.0);
    var s3 = vec4f(0.0);
    for (var d = 0u; d < params.dq; d++) {
      let qa = q[q0 + d];
      let qb = q[q1 + d];
      let qc = q[q2 + d];
      let qd = q[q3 + d];
      let ka = k[k0 + d];
      let kb = k[k1 + d];
      let kc = k[k2 + d];
      let kd = k[k3 + d];
      s0 += vec4f(dot(qa, ka), dot(qb, ka), dot(qc, ka), dot(qd, ka));
      s1 += vec4f(dot(qa, kb), dot(qb, kb), dot(qc, kb), dot(qd, kb));
      s2 += vec4f(dot(qa, kc), dot(qb, kc), dot(qc, kc), dot(qd, kc));
      s3 += vec4f(dot(qa, kd), dot(qb, kd), dot(qc, kd), dot(qd, kd));
    }
    let i0 = row0 + 4u * a;
    pt[(4u * c) * QUADS + a] = finish(s0, b, h, i0, j0);
    pt[(4u * c + 1u) * QUADS + a] = finish(s1, b, h, i0, j0 + 1u);
    pt[(4u * c + 2u) * QUADS + a] = finish(s2, b, h, i0, j0 + 2u);
    if (c < 7u) { // slot 31 is the factors', not a key's
      pt[(4u * c + 3u) * QUADS + a] = finish(s3, b, h, i0, j0 + 3u);
    }
    workgroupBarrier();

    // ---- 2. statistics of row lid: probabilities in place, the factor in slot KEYS
    if (lid < ROWS) {
      statistics(own_quad, own_lane, &run_max, &run_sum);
    }
    workgroupBarrier();

    // ---- 3. output: rescale, then add p v over the block's keys (flash_rescale.wgsl, flash_add_pv.wgsl)
// #include "flash_rescale.wgsl"
    // The block's keys that every row of this invocation sees, then (on a causal tile's diagonal) the
    // rest, which each row takes only if it sees them (flash_add_pv_seen.wgsl).
    let all_see = seen_by(row0 + 4u * ty, key0, in_block);
    for (var j = 0u; j < all_see; j++) {
      let p_top = pt[j * QUADS + ty];
      let p_bottom = pt[j * QUADS + 16u + ty];
      let row = (kv_base + (key0 + j) * params.kv_step) * params.dvq;
      let vl = v[row + v_left];
      let vr = v[row + v_right];
// #include "flash_add_pv.wgsl"
    }
    for (var j = all_see; j < in_block; j++) {
      let top = pt[j * QUADS + ty];
      let bottom = pt[j * QUADS + 16u + ty];
      let row = (kv_base + (key0 + j) * params.kv_step) * params.dvq;
      let left = v[row + v_left];
      let right = v[row + v_right];
      let seen_top = sees(row0 + 4u * ty, key0 + j);
      let seen_bottom = sees(row0 + 64u + 4u * ty, key0 + j);
// #include "flash_add_pv_seen.wgsl"
    }
    workgroupBarrier();
  }

// #include "flash_write_out.wgsl"
}
