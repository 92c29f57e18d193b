// v = a * x + y rounded once, for the n % 4 trailing elements' vec4 (fused or exact, as the probe
// said).
    var v: vec4f;
    if (fused) {
      v = fma(vec4f(params.a), x[quads], y[quads]);
    } else {
      v = exact_fma4(params.a, x[quads], y[quads]);
    }
