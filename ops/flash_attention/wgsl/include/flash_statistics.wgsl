// Statistics of the block for row 4 quad + lane (one invocation per row): its scores in the KEYS slots
// become probabilities exp(s - new max) in place, the running max and sum are updated, and the factor
// exp(old max - new max) that rescales the row's output goes to slot KEYS.
fn statistics(quad: u32, lane: u32, run_max: ptr<function, f32>, run_sum: ptr<function, f32>) {
  var block_max = LOWEST;
  for (var j = 0u; j < KEYS; j++) {
    block_max = max(block_max, pt[j * QUADS + quad][lane]);
  }
  let new_max = max(*run_max, block_max);
  var block_sum = 0.0;
  for (var j = 0u; j < KEYS; j++) {
    let s = pt[j * QUADS + quad][lane];
    let p = select(0.0, exp(s - new_max), live(s));
    pt[j * QUADS + quad][lane] = p;
    block_sum += p;
  }
  let factor = exp(*run_max - new_max);
  *run_sum = *run_sum * factor + block_sum;
  *run_max = new_max;
  pt[KEYS * QUADS + quad][lane] = factor;
}
