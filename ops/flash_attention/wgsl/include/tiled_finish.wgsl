// The end of main in flash_attention's 128-row register-tiled kernels (tiled, buffered): the 16
// partial sums of each row added through `ab`, 1 / sum per row (0 for a row with no live key), and the
// stores (flash_store_acc.wgsl). Needs main's names (tiled_setup.wgsl) and the kernel's `ab` and HALF.
  // The 16 partial sums of each row, added: 1 / sum per row, 0 for a row with no live key.
  ab[ty * 16u + tx] = sum_top;
  ab[(HALF + ty) * 16u + tx] = sum_bottom;
  workgroupBarrier();
  var total_top = vec4f(0.0);
  var total_bottom = vec4f(0.0);
  for (var t = 0u; t < 16u; t++) {
    total_top += ab[ty * 16u + t];
    total_bottom += ab[(HALF + ty) * 16u + t];
  }
  let inv_top = select(1.0 / total_top, vec4f(0.0), total_top == vec4f(0.0));
  let inv_bottom = select(1.0 / total_bottom, vec4f(0.0), total_bottom == vec4f(0.0));
// #include "flash_store_acc.wgsl"
