// One k of the block: four rows of a at top and bottom, four columns of b (or of the decoded weight)
// at left and right, 64 FMAs into the 128 x 128 tile's accumulators (acc128.wgsl).
fn k_step(ia: u32, ib: u32) {
  let top = a_t[ia];
  let bottom = a_t[ia + HALF];
  let left = b_s[ib];
  let right = b_s[ib + HALF];
  acc0_left = fma(vec4f(top.x), left, acc0_left);
  acc0_right = fma(vec4f(top.x), right, acc0_right);
  acc1_left = fma(vec4f(top.y), left, acc1_left);
  acc1_right = fma(vec4f(top.y), right, acc1_right);
  acc2_left = fma(vec4f(top.z), left, acc2_left);
  acc2_right = fma(vec4f(top.z), right, acc2_right);
  acc3_left = fma(vec4f(top.w), left, acc3_left);
  acc3_right = fma(vec4f(top.w), right, acc3_right);
  acc4_left = fma(vec4f(bottom.x), left, acc4_left);
  acc4_right = fma(vec4f(bottom.x), right, acc4_right);
  acc5_left = fma(vec4f(bottom.y), left, acc5_left);
  acc5_right = fma(vec4f(bottom.y), right, acc5_right);
  acc6_left = fma(vec4f(bottom.z), left, acc6_left);
  acc6_right = fma(vec4f(bottom.z), right, acc6_right);
  acc7_left = fma(vec4f(bottom.w), left, acc7_left);
  acc7_right = fma(vec4f(bottom.w), right, acc7_right);
}
