// The stores at the end of main in the 128 x 128 tiles with an interior path (kernel, f16storage,
// linear and their fused kernels): an interior tile (wholly inside c, N % 4 == 0; `interior` and
// nq = N / 4 come from the kernel's loop) writes its accumulators unchecked at vec4 indices computed
// once, an edge tile through the checked store_c (tile128_store.wgsl).
  if (interior) {
    let c_at = (row0 + 4u * ty) * nq + col0 / 4u + tx; // vec4 index of acc0_left
    c[c_at] = acc0_left;
    c[c_at + HALF] = acc0_right;
    c[c_at + nq] = acc1_left;
    c[c_at + nq + HALF] = acc1_right;
    c[c_at + 2u * nq] = acc2_left;
    c[c_at + 2u * nq + HALF] = acc2_right;
    c[c_at + 3u * nq] = acc3_left;
    c[c_at + 3u * nq + HALF] = acc3_right;
    c[c_at + 64u * nq] = acc4_left;
    c[c_at + 64u * nq + HALF] = acc4_right;
    c[c_at + 65u * nq] = acc5_left;
    c[c_at + 65u * nq + HALF] = acc5_right;
    c[c_at + 66u * nq] = acc6_left;
    c[c_at + 66u * nq + HALF] = acc6_right;
    c[c_at + 67u * nq] = acc7_left;
    c[c_at + 67u * nq + HALF] = acc7_right;
  } else {
// #include "tile128_store.wgsl"
  }
