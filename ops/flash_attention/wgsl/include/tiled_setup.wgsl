// The start of main in flash_attention's 128-row register-tiled kernels (tiled, buffered; tiled.wgsl's
// header describes the roles): the (row tile, head) pair this workgroup computes, last row tiles
// first, the keys it needs, the invocation's rows and output columns, its running max and sums, its
// accumulators (gemm_acc8x8.wgsl), and the registers that carry the first chunk of q and k (loaded
// here) and then of v. A workgroup past the last pair returns. Needs main's wid, grid and lid, ROWS,
// COLS, KEYS and the functions of tiled_functions.wgsl.
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
  // one of k's (vec4s lid and lid + 256 of q's, lid of k's), then two of v's (ab[lid], ab[lid + 256]).
  var q_lo = load_q(q_base, row0, 0u, lid);
  var q_hi = load_q(q_base, row0, 0u, lid + 256u);
  var k_quad = load_k(kv_base, 0u, 0u, lid);
  var v_lo = vec4f(0.0);
  var v_hi = vec4f(0.0);
