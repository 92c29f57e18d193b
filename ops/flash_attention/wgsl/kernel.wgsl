// flash_attention/kernel: out = softmax(q k^T * scale + mask) v in one dispatch, the [L, S] score
// matrix never stored: each workgroup walks the keys of one head in blocks and keeps a running
// (max, sum) per query row (online softmax, FlashAttention), rescaling its output when the max grows.
// q [B, H, L, D], k [B, H / group, S, D], v [B, H / group, S, Dv], out [B, H, L, Dv]; query head h
// reads KV head h / group (contiguous groups, torch's enable_gqa). D % 4 == 0 and Dv % 4 == 0: every
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
// softmax). Under `causal` a tile stops at the last key its last row can see.
// Rows past L read row L - 1 and write nothing; keys past S read key S - 1 and are dead.

// #include "flash_bindings.wgsl"

const ROWS = 128u;  // query rows per workgroup
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
  // (row tile, head) pairs beyond 65,535 fold into y: pair = id.x + id.y * num_workgroups.x, the row
  // tiles of one head consecutive (they share its K and V in L2); z is the tile of output columns.
  let pair = wid.x + wid.y * grid.x;
  if (pair >= params.tiles * params.BH) {
    return;
  }
  let bh = pair / params.tiles;
  let b = bh / params.H;
  let h = bh % params.H;
  let kv_heads = params.H / params.group;
  let kv_row0 = (b * kv_heads + h / params.group) * params.S; // key 0 of this head's K and V
  let row0 = (pair % params.tiles) * ROWS;
  let last_row = min(row0 + ROWS, params.L) - 1u;
  // Keys this tile needs: all S, or under causal up to the last row's last visible key.
  var keys = i32(params.S);
  if (params.causal != 0u) {
    keys = clamp(i32(last_row) + params.offset + 1, 0, i32(params.S));
  }
  let blocks = (u32(keys) + KEYS - 1u) / KEYS;

  // Scores role: rows 4a..4a+3, keys 4c..4c+3 of a block.
  let a = lid / 8u;
  let c = lid % 8u;
  let q0 = (bh * params.L + min(row0 + 4u * a, params.L - 1u)) * params.dq;
  let q1 = (bh * params.L + min(row0 + 4u * a + 1u, params.L - 1u)) * params.dq;
  let q2 = (bh * params.L + min(row0 + 4u * a + 2u, params.L - 1u)) * params.dq;
  let q3 = (bh * params.L + min(row0 + 4u * a + 3u, params.L - 1u)) * params.dq;

  // Statistics role (lid < ROWS): row lid's running max and sum.
  var run_max = LOWEST;
  var run_sum = 0.0;
  let own_quad = lid / 4u; // row lid is component lid % 4 of quad lid / 4 of every slot
  let own_lane = lid % 4u;

  // Output role: rows 4ty.. (quad ty) and 64+4ty.. (quad 16+ty), columns quad tx and 16+tx of the tile.
  let tx = lid % 16u;
  let ty = lid / 16u;
  let dv_left = wid.z * 32u + tx;
  let dv_right = wid.z * 32u + 16u + tx;
  let v_left = min(dv_left, params.dvq - 1u);
  let v_right = min(dv_right, params.dvq - 1u);
  var acc0_left = vec4f(0.0);
  var acc0_right = vec4f(0.0);
  var acc1_left = vec4f(0.0);
  var acc1_right = vec4f(0.0);
  var acc2_left = vec4f(0.0);
  var acc2_right = vec4f(0.0);
  var acc3_left = vec4f(0.0);
  var acc3_right = vec4f(0.0);
  var acc4_left = vec4f(0.0);
  var acc4_right = vec4f(0.0);
  var acc5_left = vec4f(0.0);
  var acc5_right = vec4f(0.0);
  var acc6_left = vec4f(0.0);
  var acc6_right = vec4f(0.0);
  var acc7_left = vec4f(0.0);
  var acc7_right = vec4f(0.0);

  for (var blk = 0u; blk < blocks; blk++) {
    let key0 = blk * KEYS;
    // ---- 1. scores of rows 4a..4a+3 x keys key0 + 4c .. key0 + 4c + 3
    let j0 = key0 + 4u * c;
    let k0 = (kv_row0 + min(j0, params.S - 1u)) * params.dq;
    let k1 = (kv_row0 + min(j0 + 1u, params.S - 1u)) * params.dq;
    let k2 = (kv_row0 + min(j0 + 2u, params.S - 1u)) * params.dq;
    let k3 = (kv_row0 + min(j0 + 3u, params.S - 1u)) * params.dq;
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

    // ---- 3. output: rescale, then add p v over the block's keys
    let f_top = pt[KEYS * QUADS + ty];
    let f_bottom = pt[KEYS * QUADS + 16u + ty];
    acc0_left *= f_top.x;
    acc0_right *= f_top.x;
    acc1_left *= f_top.y;
    acc1_right *= f_top.y;
    acc2_left *= f_top.z;
    acc2_right *= f_top.z;
    acc3_left *= f_top.w;
    acc3_right *= f_top.w;
    acc4_left *= f_bottom.x;
    acc4_right *= f_bottom.x;
    acc5_left *= f_bottom.y;
    acc5_right *= f_bottom.y;
    acc6_left *= f_bottom.z;
    acc6_right *= f_bottom.z;
    acc7_left *= f_bottom.w;
    acc7_right *= f_bottom.w;
    let in_block = min(KEYS, u32(keys) - key0);
    for (var j = 0u; j < in_block; j++) {
      let p_top = pt[j * QUADS + ty];
      let p_bottom = pt[j * QUADS + 16u + ty];
      let row = (kv_row0 + key0 + j) * params.dvq;
      let vl = v[row + v_left];
      let vr = v[row + v_right];
      acc0_left += p_top.x * vl;
      acc0_right += p_top.x * vr;
      acc1_left += p_top.y * vl;
      acc1_right += p_top.y * vr;
      acc2_left += p_top.z * vl;
      acc2_right += p_top.z * vr;
      acc3_left += p_top.w * vl;
      acc3_right += p_top.w * vr;
      acc4_left += p_bottom.x * vl;
      acc4_right += p_bottom.x * vr;
      acc5_left += p_bottom.y * vl;
      acc5_right += p_bottom.y * vr;
      acc6_left += p_bottom.z * vl;
      acc6_right += p_bottom.z * vr;
      acc7_left += p_bottom.w * vl;
      acc7_right += p_bottom.w * vr;
    }
    workgroupBarrier();
  }

  // The sums, through slot KEYS: 1 / sum per row, 0 for a row with no live key.
  if (lid < ROWS) {
    pt[KEYS * QUADS + own_quad][own_lane] = select(1.0 / run_sum, 0.0, run_sum == 0.0);
  }
  workgroupBarrier();
  let inv_top = pt[KEYS * QUADS + ty];
  let inv_bottom = pt[KEYS * QUADS + 16u + ty];
  let top = row0 + 4u * ty;
  let bottom = row0 + 64u + 4u * ty;
  let base = bh * params.L;
  store(base, top, dv_left, acc0_left * inv_top.x);
  store(base, top + 1u, dv_left, acc1_left * inv_top.y);
  store(base, top + 2u, dv_left, acc2_left * inv_top.z);
  store(base, top + 3u, dv_left, acc3_left * inv_top.w);
  store(base, bottom, dv_left, acc4_left * inv_bottom.x);
  store(base, bottom + 1u, dv_left, acc5_left * inv_bottom.y);
  store(base, bottom + 2u, dv_left, acc6_left * inv_bottom.z);
  store(base, bottom + 3u, dv_left, acc7_left * inv_bottom.w);
  store(base, top, dv_right, acc0_right * inv_top.x);
  store(base, top + 1u, dv_right, acc1_right * inv_top.y);
  store(base, top + 2u, dv_right, acc2_right * inv_top.z);
  store(base, top + 3u, dv_right, acc3_right * inv_top.w);
  store(base, bottom, dv_right, acc4_right * inv_bottom.x);
  store(base, bottom + 1u, dv_right, acc5_right * inv_bottom.y);
  store(base, bottom + 2u, dv_right, acc6_right * inv_bottom.z);
  store(base, bottom + 3u, dv_right, acc7_right * inv_bottom.w);
}
