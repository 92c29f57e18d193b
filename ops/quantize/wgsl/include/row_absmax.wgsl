// The statements that find row `base .. base + cols`'s absmax as f32 bits, into `absmax_bits`: each
// invocation takes the largest |x| of its strided share, and the workgroup reduces those through
// `maxima` (for non-negative floats, the order of their bit patterns as u32 is their order).
  var largest = 0u;
  for (var c = lid; c < cols; c += WORKGROUP) {
    largest = max(largest, bitcast<u32>(x[base + c]) & 0x7fffffffu);
  }
  maxima[lid] = largest;
  workgroupBarrier();
  for (var stride = WORKGROUP / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      maxima[lid] = max(maxima[lid], maxima[lid + stride]);
    }
    workgroupBarrier();
  }
  let absmax_bits = maxima[0];
