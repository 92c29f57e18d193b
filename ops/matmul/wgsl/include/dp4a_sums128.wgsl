// The i32 sums of the 128 x 128 dp4a tiles (dp4a_q8_product128.wgsl, dp4a_q4_product128.wgsl and
// their _pipelined forms), declared as function-local variables of main: sixteen vec4i, left0-3 the
// invocation's rows 4ty..4ty+3 and left4-7 its rows 64+4ty..64+4ty+3, each at columns 4tx..4tx+3;
// right0-7 the same rows at columns 64+4tx..64+4tx+3. dp4a_dot8x8.wgsl adds into them.
  var left0 = vec4i(0);
  var right0 = vec4i(0);
  var left1 = vec4i(0);
  var right1 = vec4i(0);
  var left2 = vec4i(0);
  var right2 = vec4i(0);
  var left3 = vec4i(0);
  var right3 = vec4i(0);
  var left4 = vec4i(0);
  var right4 = vec4i(0);
  var left5 = vec4i(0);
  var right5 = vec4i(0);
  var left6 = vec4i(0);
  var right6 = vec4i(0);
  var left7 = vec4i(0);
  var right7 = vec4i(0);
