// This invocation's row and lane, and its four accumulators.
  let row = (wid.x + wid.y * groups.x) * ROWS + lid.y;
  let lane = lid.x;
  let k = params.k;
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
