// The last four halvings of the NVIDIA quantized kernels' tree reduction (q_tree.wgsl, and all of
// q8row_rows64's): each row group's partial sums (a vec4 each: its four rows) in scratch[first + lane]
// for lanes below 16, past a barrier, halved in place, every addition of a halving at once and a
// barrier after each, leave the four rows' dot products in scratch[first].
  if (lane < 8u) { scratch[first + lane] += scratch[first + lane + 8u]; }
  workgroupBarrier();
  if (lane < 4u) { scratch[first + lane] += scratch[first + lane + 4u]; }
  workgroupBarrier();
  if (lane < 2u) { scratch[first + lane] += scratch[first + lane + 2u]; }
  workgroupBarrier();
  if (lane == 0u) { scratch[first] += scratch[first + 1u]; }
  workgroupBarrier();
