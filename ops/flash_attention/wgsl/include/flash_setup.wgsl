// The start of main in flash_attention's kernels (kernel.wgsl describes the roles): the (row tile,
// head) pair this workgroup computes and the keys it needs, then what each invocation holds for its
// three roles: the scores role's rows and their q offsets, the statistics role's running max and
// sum, the output role's (tx, ty) and its two columns of quads. A workgroup past the last pair
// returns. Needs main's wid, grid and lid, the kernel's params (flash_bindings.wgsl), ROWS, COLS, KEYS and
// LOWEST. The output role's accumulators follow in each kernel (gemm_acc8x8.wgsl).
  // (row tile, head) pairs beyond 65,535 fold into y: pair = id.x + id.y * num_workgroups.x, the row
  // tiles of one head consecutive (they share its K and V in L2); z is the tile of output columns.
  let pair = wid.x + wid.y * grid.x;
  if (pair >= params.tiles * params.BH) {
    return;
  }
  let bh = pair / params.tiles;
  let b = bh / params.H;
  let h = bh % params.H;
  let kv_base = kv_base_of(b, h / params.group); // key 0 of this head's K and V
  let q_base = q_base_of(b, h); // query row 0 of this head in q and out
  let row0 = (pair % params.tiles) * ROWS;
  let last_row = min(row0 + ROWS, params.L) - 1u;
  // Keys this tile needs: all S, or under causal up to the last row's last visible key.
  var keys = i32(params.S);
  if (params.causal != 0u) {
    keys = clamp(i32(last_row) + params.offset + 1, 0, i32(params.S));
  }
  let blocks = (u32(keys) + KEYS - 1u) / KEYS;

  // Scores role: rows 4a..4a+3 of a block (which keys invocation c takes is the kernel's).
  let a = lid / 8u;
  let c = lid % 8u;
  let q0 = (q_base + min(row0 + 4u * a, params.L - 1u) * params.q_step) * params.dq;
  let q1 = (q_base + min(row0 + 4u * a + 1u, params.L - 1u) * params.q_step) * params.dq;
  let q2 = (q_base + min(row0 + 4u * a + 2u, params.L - 1u) * params.q_step) * params.dq;
  let q3 = (q_base + min(row0 + 4u * a + 3u, params.L - 1u) * params.q_step) * params.dq;

  // Statistics role (lid < ROWS): row lid's running max and sum.
  var run_max = LOWEST;
  var run_sum = 0.0;
  let own_quad = lid / 4u; // row lid is component lid % 4 of quad lid / 4 of every slot
  let own_lane = lid % 4u;

  // Output role: rows 4ty.. (quad ty) and 64+4ty.. (quad 16+ty), columns quad tx and 16+tx of the tile.
  let tx = lid % 16u;
  let ty = lid / 16u;
  let dv_left = wid.z * (COLS / 4u) + tx;
  let dv_right = wid.z * (COLS / 4u) + 16u + tx;
