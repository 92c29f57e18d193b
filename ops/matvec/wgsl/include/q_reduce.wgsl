// The two-round reduction of the workgroup's partial sums (each a vec4: four rows): 8 invocations
// add SPAN each, in place; the caller's invocation 0 then adds the 8.
  workgroupBarrier();
  if (lane < 8u) {
    var s = vec4f(0.0);
    for (var j = 0u; j < SPAN; j++) {
      s += partial[first + lane * SPAN + j];
    }
    partial[first + lane * SPAN] = s;
  }
  workgroupBarrier();
