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
const COLS = 128u;  // output columns per workgroup (more in z)
const KEYS = 31u;   // keys per block; slot KEYS of `pt` holds the rescale factors
const QUADS = 32u;  // ROWS / 4: quads of rows per slot

var<workgroup> pt: array<vec4f, 1024>; // 32 slots x QUADS
var<workgroup> kv: array<vec4f, 1024>; // the block's K (32 quads x 32 keys), then its V (32 keys x 32 quads)

// #include "flash_finish.wgsl"

// #include "flash_statistics.wgsl"

// #include "flash_store.wgsl"

// Stages quads dc .. dc + 31 of the block's 32 K rows (keys key0 ..; past S, key S - 1; past D, the last
// quad) transposed into kv: four coalesced loads per invocation, issued together.
fn stage_k(kv_base: u32, key0: u32, dc: u32, lid: u32) {
  let last_key = params.S - 1u;
  let last_quad = params.dq - 1u;
  let i0 = lid;
  let i1 = lid + 256u;
  let i2 = lid + 512u;
  let i3 = lid + 768u;
  let e0 = k[(kv_base + min(key0 + i0 / 32u, last_key) * params.kv_step) * params.dq + min(dc + i0 % 32u, last_quad)];
  let e1 = k[(kv_base + min(key0 + i1 / 32u, last_key) * params.kv_step) * params.dq + min(dc + i1 % 32u, last_quad)];
  let e2 = k[(kv_base + min(key0 + i2 / 32u, last_key) * params.kv_step) * params.dq + min(dc + i2 % 32u, last_quad)];
  let e3 = k[(kv_base + min(key0 + i3 / 32u, last_key) * params.kv_step) * params.dq + min(dc + i3 % 32u, last_quad)];
  kv[(i0 % 32u) * 32u + i0 / 32u] = e0;
  kv[(i1 % 32u) * 32u + i1 / 32u] = e1;
  kv[(i2 % 32u) * 32u + i2 / 32u] = e2;
  kv[(i3 % 32u) * 32u + i3 / 32u] = e3;
}

// Stages the block's 32 V rows (keys key0 ..; past S, key S - 1), output quads dv0 .. dv0 + 31 (past Dv,
// the last), into kv as rows: four coalesced loads per invocation, issued together.
fn stage_v(kv_base: u32, key0: u32, dv0: u32, lid: u32) {
  let last_key = params.S - 1u;
  let last_quad = params.dvq - 1u;
  let i0 = lid;
  let i1 = lid + 256u;
  let i2 = lid + 512u;
  let i3 = lid + 768u;
  let e0 = v[(kv_base + min(key0 + i0 / 32u, last_key) * params.kv_step) * params.dvq + min(dv0 + i0 % 32u, last_quad)];
  let e1 = v[(kv_base + min(key0 + i1 / 32u, last_key) * params.kv_step) * params.dvq + min(dv0 + i1 % 32u, last_quad)];
  let e2 = v[(kv_base + min(key0 + i2 / 32u, last_key) * params.kv_step) * params.dvq + min(dv0 + i2 % 32u, last_quad)];
  let e3 = v[(kv_base + min(key0 + i3 / 32u, last_key) * params.kv_step) * params.dvq + min(dv0 + i3 % 32u, last_quad)];
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
// #include "flash_setup.wgsl"
// #include "gemm_acc8x8.wgsl"

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
      stage_k(kv_base, key0, dc, lid);
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
    stage_v(kv_base, key0, wid.z * (COLS / 4u), lid);
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
      let vl = kv[j * 32u + tx];
      let vr = kv[j * 32u + 16u + tx];
// #include "flash_add_pv.wgsl"
    }
    for (var j = all_see; j < in_block; j++) {
      let top = pt[j * QUADS + ty];
      let bottom = pt[j * QUADS + 16u + ty];
      let left = kv[j * 32u + tx];
      let right = kv[j * 32u + 16u + tx];
      let seen_top = sees(row0 + 4u * ty, key0 + j);
      let seen_bottom = sees(row0 + 64u + 4u * ty, key0 + j);
// #include "flash_add_pv_seen.wgsl"
    }
    workgroupBarrier();
  }

// #include "flash_write_out.wgsl"
}
