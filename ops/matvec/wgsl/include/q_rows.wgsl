// The start of the NVIDIA quantized kernels' main: this invocation's lane across K and its four rows,
// r0..r3, clamped to N - 1 (rows past N are read as row N - 1, so that no load needs a guard, and
// never written). More than 65,535 workgroups fold into y: group = id.x + id.y * num_workgroups.x.
  let lane = lid.x;
  let n = params.n;
  let k = params.k;
  let row = ((wid.x + wid.y * groups.x) * GROUPS + lid.y) * 4u; // this invocation's first row
  let r0 = min(row, n - 1u);
  let r1 = min(row + 1u, n - 1u);
  let r2 = min(row + 2u, n - 1u);
  let r3 = min(row + 3u, n - 1u);
  let first = lid.y * LANES; // this row group's partial sums in scratch