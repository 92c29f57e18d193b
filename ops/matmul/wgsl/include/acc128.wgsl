// The 8 x 8 outputs of this invocation of a 128 x 128 tile, sixteen named vec4s declared as
// function-local variables of main (not module-scope private ones; see kernel.wgsl): acc0-3 are rows
// 4ty..4ty+3 of the tile, acc4-7 rows 64+4ty..64+4ty+3; _left holds columns 4tx..4tx+3, _right
// columns 64+4tx..64+4tx+3.
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
