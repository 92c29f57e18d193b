// The end of the NVIDIA quantized kernels' tree reduction. Each row group's partial sums (a vec4
// each: its four rows) are in scratch[first + lane] for lanes below 64 (a kernel of 128 lanes has
// added its upper half), past a barrier; six halvings in place, every addition of a halving at once
// and a barrier after each, leave the four rows' dot products in scratch[first].
  if (lane < 32u) { scratch[first + lane] += scratch[first + lane + 32u]; }
  workgroupBarrier();
  if (lane < 16u) { scratch[first + lane] += scratch[first + lane + 16u]; }
  workgroupBarrier();
// #include "q_tree16.wgsl"
