// flash_attention/staged: the function of flash_attention/kernel (read its header first), with each
// block's K and V staged in workgroup memory instead of read from memory by every invocation that needs
// them. On the H200, /kernel's score loop took 14.0 of its 20.7 ms at B = 1, H = 32, L = S = 4096,
// D = 128, causal (the kernel with its output phase cut: 14.0 ms; with its score loop cut: 6.0 ms):
// every one of its iterations loads a quad of four new K rows, whose first touch goes to L2, so the loop
// waits on L2 latency once per quad of D. Here every invocation issues its four loads of a block at
// once, coalesced, and the loops read workgroup memory.
//
// Per block of 31 keys, four barriers:
// 1. K staged, transposed: kv[quad * 32 + key] holds quad `quad` of key `key`'s row (a D over 128 is
//    taken 32 quads at a time, a barrier between); the scores invocation (a, c) takes keys c, c + 8,
//    c + 16, c + 24, so that the 8 invocations of a warp sharing a row quad read 8 consecutive vec4s;
// 2. scores to `pt` as in /kernel;
// 3. V staged as rows, kv[key * 32 + quad] (quad of this workgroup's 128 output columns), while the
//    statistics invocations turn scores into probabilities;
// 4. the output phase reads p from `pt` and v from `kv`.
// `pt` and `kv` take 16 KiB each: 32 KiB of workgroup memory, more than WebGPU's default 16 KiB, so
// the plan takes this kernel only where the device grants it and /kernel elsewhere.

// #include "flash_bindings.wgsl"

const ROWS = 128u;  // query rows per workgroup
const KEYS = 31u;   // keys per block; slot KEYS of `pt` holds the rescale factors
const QUADS = 32u;  // ROWS / 4: quads of rows per slot

var<workgroup> pt: array<vec4f, 1024>; // 32 slots x QUADS
var<workgroup> kv: array<vec4f, 1024>; // the block's K (32 quads x 32 keys), then its V (32 keys x 32 quads)

// #include "flash_finish.wgsl"

// #include "flash_statistics.wgsl"

// #include "flash_store.wgsl"

// Stages quads dc .. dc + 31 of the block's 32 K rows (keys key0 ..; past S, key S - 1; past D, the last
// quad) transposed into kv: four coalesced loads per invocation, issued together.
fn stage_k(kv_row0: u32, key0: u32, dc: u32, lid: u32) {
  let last_key = params.S - 1u;
  let last_quad = params.dq - 1u;
  let i0 = lid;
  let i1 = lid + 256u;
  let i2 = lid + 512u;
  let i3 = lid + 768u;
  let e0 = k[(kv_row0 + min(key0 + i0 / 32u, last_key)) * params.dq + min(dc + i0 % 32u, last_quad)];
  let e1 = k[(kv_row0 + min(key0 + i1 / 32u, last_key)) * params.dq + min(dc + i1 % 32u, last_quad)];
  let e2 = k[(kv_row0 + min(key0 + i2 / 32u, last_key)) * params.dq + min(dc + i2 % 32u, last_quad)];
  let e3 = k[(kv_row0 + min(key0 + i3 / 32u, last_key)) * params.dq + min(dc + i3 % 32u, last_quad)];
  kv[(i0 % 32u) * 32u + i0 / 32u] = e0;
  kv[(i1 % 32u) * 32u + i1 / 32u] = e1;
  kv[(i2 % 32u) * 32u + i2 / 32u] = e2;
  kv[(i3 % 32u) * 32u + i3 / 32u] = e3;
}

// Stages the block's 32 V rows (keys key0 ..; past S, key S - 1), output quads dv0 .. dv0 + 31 (past Dv,
// the last), into kv as rows: four coalesced loads per invocation, issued together.
fn stage_v(kv_row0: u32, key0: u32, dv0: u32, lid: u32) {
  let last_key = params.S - 1u;
  let last_quad = params.dvq - 1u;
  let i0 = lid;
  let i1 = lid + 256u;
  let i2 = lid + 512u;
  let i3 = lid + 768u;
  let e0 = v[(kv_row0 + min(key0 + i0 / 32u, last_key)) * params.dvq + min(dv0 + i0 % 32u, last_quad)];
  let e1 = v[(kv_row0 + min(key0 + i1 / 32u, last_key)) * params.dvq + min(dv0 + i1 % 32u, last_quad)];
  let e2 = v[(kv_row0 + min(key0 + i2 / 32u, last_key)) * params.dvq + min(dv0 + i2 % 32u, last_quad)];
  let e3 = v[(kv_row0 + min(key0 + i3 / 32u, last_key)) * params.dvq + min(dv0 + i3 % 32u, last_quad)];
  kv[i0] = e0;
  kv[i1] = e1;
  kv[i2] = e2;
  kv[i3] = e3;
}

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

  // Scores role: rows 4a..4a+3, keys c, c + 8, c + 16, c + 24 of a block.
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
    // ---- 1. scores of rows 4a..4a+3 x keys key0 + c + 8 kk, D taken 32 quads at a time
    var s0 = vec4f(0.0); // key key0 + c for the four rows
    var s1 = vec4f(0.0); // key key0 + c + 8
    var s2 = vec4f(0.0);
    var s3 = vec4f(0.0);
    for (var dc = 0u; dc < params.dq; dc += 32u) {
      if (dc > 0u) {
        workgroupBarrier(); // the previous quads of K are read
      }
      stage_k(kv_row0, key0, dc, lid);
      workgroupBarrier();
      let quads = min(32u, params.dq - dc);
      for (var d = 0u; d < quads; d++) {
        let qa = q[q0 + dc + d];
        let qb = q[q1 + dc + d];
        let qc = q[q2 + dc + d];
        let qd = q[q3 + dc + d];
        let ka = kv[d * 32u + c];
        let kb = kv[d * 32u + c + 8u];
        let kc = kv[d * 32u + c + 16u];
        let kd = kv[d * 32u + c + 24u];
        s0 += vec4f(dot(qa, ka), dot(qb, ka), dot(qc, ka), dot(qd, ka));
        s1 += vec4f(dot(qa, kb), dot(qb, kb), dot(qc, kb), dot(qd, kb));
        s2 += vec4f(dot(qa, kc), dot(qb, kc), dot(qc, kc), dot(qd, kc));
        s3 += vec4f(dot(qa, kd), dot(qb, kd), dot(qc, kd), dot(qd, kd));
      }
    }
    let i0 = row0 + 4u * a;
    pt[c * QUADS + a] = finish(s0, b, h, i0, key0 + c);
    pt[(c + 8u) * QUADS + a] = finish(s1, b, h, i0, key0 + c + 8u);
    pt[(c + 16u) * QUADS + a] = finish(s2, b, h, i0, key0 + c + 16u);
    if (c < 7u) { // slot 31 is the factors', not a key's
      pt[(c + 24u) * QUADS + a] = finish(s3, b, h, i0, key0 + c + 24u);
    }
    workgroupBarrier();

    // ---- 2. V staged (every invocation) and the statistics of row lid (lid < ROWS)
    stage_v(kv_row0, key0, wid.z * 32u, lid);
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
      let vl = kv[j * 32u + tx];
      let vr = kv[j * 32u + 16u + tx];
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
