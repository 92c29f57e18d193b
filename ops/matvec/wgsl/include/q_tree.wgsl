// The end of the NVIDIA quantized kernels' tree reduction. Each row group's partial sums (a vec4
// each: its four rows) are in scratch[first + lane] for lanes below 64 (a kernel of 128 lanes has
// added its upper half), past a barrier; six halvings in place, every addition of a halving at once
// and a barrier after each, leave the four rows' dot products in scratch[first].
  if (lane < 32u) { scratch[first + lane] += scratch[first + lane + 32u]; }
  workgroupBarrier();
  if (lane < 16u) { scratch[first + lane] += scratch[first + lane + 16u]; }
  workgroupBarrier();
  if (lane < 8u) { scratch[first + lane] += scratch[first + lane + 8u]; }
  workgroupBarrier();
  if (lane < 4u) { scratch[first + lane] += scratch[first + lane + 4u]; }
  workgroupBarrier();
  if (lane < 2u) { scratch[first + lane] += scratch[first + lane + 2u]; }
  workgroupBarrier();
  if (lane == 0u) { scratch[first] += scratch[first + 1u]; }
  workgroupBarrier();
