// The 8 x 8 outputs of this invocation, sixteen named vec4s local to main: acc0-3 are output
// channels row0 + 4ty + 0..3, acc4-7 row0 + 4 HALF_M + 4ty + 0..3; _left holds columns col0 + 4tx + 0..3,
// _right col0 + 4 HALF_N + 4tx + 0..3.
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
