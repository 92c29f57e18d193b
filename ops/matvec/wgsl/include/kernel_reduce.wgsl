// The two-round reduction of the row's LANES partial sums in workgroup memory (8 invocations add
// SPAN each, then one adds the 8) and the store of y[row].
  let first = lid.y * LANES;
  partial[first + lane] = dot(acc0 + acc1 + acc2 + acc3, vec4f(1.0));
  workgroupBarrier();
  if (lane < 8u) {
    var s = 0.0;
    for (var j = 0u; j < SPAN; j++) {
      s += partial[first + lane * SPAN + j];
    }
    partial[first + lane * SPAN] = s;
  }
  workgroupBarrier();
  if (lane == 0u && row < params.n) {
    var s = 0.0;
    for (var j = 0u; j < 8u; j++) {
      s += partial[first + j * SPAN];
    }
    y[row] = s;
  }
