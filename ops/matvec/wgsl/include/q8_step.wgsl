// One step of the NVIDIA-layout int8 kernels' vec4 path (q8row.nvidia, q8row_rows64): the 16 codes
// of each of four rows (q0..q3, vec4<u32>) decoded (q8_magic.wgsl) and multiplied by the four vec4s
// of x they share (x0..x3), into a0..a3.
      a0 = fma((bitcast<vec4f>((vec4u(q0.x, q0.x, q0.x >> 16u, q0.x >> 16u) & MASK) ^ MAGIC) - BIAS), x0, a0);
      a0 = fma((bitcast<vec4f>((vec4u(q0.y, q0.y, q0.y >> 16u, q0.y >> 16u) & MASK) ^ MAGIC) - BIAS), x1, a0);
      a0 = fma((bitcast<vec4f>((vec4u(q0.z, q0.z, q0.z >> 16u, q0.z >> 16u) & MASK) ^ MAGIC) - BIAS), x2, a0);
      a0 = fma((bitcast<vec4f>((vec4u(q0.w, q0.w, q0.w >> 16u, q0.w >> 16u) & MASK) ^ MAGIC) - BIAS), x3, a0);
      a1 = fma((bitcast<vec4f>((vec4u(q1.x, q1.x, q1.x >> 16u, q1.x >> 16u) & MASK) ^ MAGIC) - BIAS), x0, a1);
      a1 = fma((bitcast<vec4f>((vec4u(q1.y, q1.y, q1.y >> 16u, q1.y >> 16u) & MASK) ^ MAGIC) - BIAS), x1, a1);
      a1 = fma((bitcast<vec4f>((vec4u(q1.z, q1.z, q1.z >> 16u, q1.z >> 16u) & MASK) ^ MAGIC) - BIAS), x2, a1);
      a1 = fma((bitcast<vec4f>((vec4u(q1.w, q1.w, q1.w >> 16u, q1.w >> 16u) & MASK) ^ MAGIC) - BIAS), x3, a1);
      a2 = fma((bitcast<vec4f>((vec4u(q2.x, q2.x, q2.x >> 16u, q2.x >> 16u) & MASK) ^ MAGIC) - BIAS), x0, a2);
      a2 = fma((bitcast<vec4f>((vec4u(q2.y, q2.y, q2.y >> 16u, q2.y >> 16u) & MASK) ^ MAGIC) - BIAS), x1, a2);
      a2 = fma((bitcast<vec4f>((vec4u(q2.z, q2.z, q2.z >> 16u, q2.z >> 16u) & MASK) ^ MAGIC) - BIAS), x2, a2);
      a2 = fma((bitcast<vec4f>((vec4u(q2.w, q2.w, q2.w >> 16u, q2.w >> 16u) & MASK) ^ MAGIC) - BIAS), x3, a2);
      a3 = fma((bitcast<vec4f>((vec4u(q3.x, q3.x, q3.x >> 16u, q3.x >> 16u) & MASK) ^ MAGIC) - BIAS), x0, a3);
      a3 = fma((bitcast<vec4f>((vec4u(q3.y, q3.y, q3.y >> 16u, q3.y >> 16u) & MASK) ^ MAGIC) - BIAS), x1, a3);
      a3 = fma((bitcast<vec4f>((vec4u(q3.z, q3.z, q3.z >> 16u, q3.z >> 16u) & MASK) ^ MAGIC) - BIAS), x2, a3);
      a3 = fma((bitcast<vec4f>((vec4u(q3.w, q3.w, q3.w >> 16u, q3.w >> 16u) & MASK) ^ MAGIC) - BIAS), x3, a3);
