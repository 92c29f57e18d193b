// One word of K in the 128 x 128 dp4a tiles (dp4a_multiply128.wgsl, dp4a_k_steps128_pipelined.wgsl):
// that word of rows top (4ty..4ty+3) and bottom (64+4ty..64+4ty+3) times the same word of weight rows
// left (4tx..4tx+3) and right (64+4tx..64+4tx+3), 64 dot4I8Packed added into the i32 sums left0-7
// and right0-7 (dp4a_sums128.wgsl). Needs top, bottom, left and right (vec4u), and dp4a_ops.wgsl.
      left0 += dot_row(top.x, left);
      right0 += dot_row(top.x, right);
      left1 += dot_row(top.y, left);
      right1 += dot_row(top.y, right);
      left2 += dot_row(top.z, left);
      right2 += dot_row(top.z, right);
      left3 += dot_row(top.w, left);
      right3 += dot_row(top.w, right);
      left4 += dot_row(bottom.x, left);
      right4 += dot_row(bottom.x, right);
      left5 += dot_row(bottom.y, left);
      right5 += dot_row(bottom.y, right);
      left6 += dot_row(bottom.z, left);
      right6 += dot_row(bottom.z, right);
      left7 += dot_row(bottom.w, left);
      right7 += dot_row(bottom.w, right);
