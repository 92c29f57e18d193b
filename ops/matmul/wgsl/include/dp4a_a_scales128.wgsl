// The activation scales of an invocation's eight rows in the 128 x 128 dp4a tiles: a_scale0-3 for its
// top rows (row0 + 4ty .. + 3), a_scale4-7 for the rows 64 below, each a_scales[m] or 0 outside a.
// Read by the q8 and q4 tiles' ends (dp4a_q8_scale128.wgsl, dp4a_q4_a_scale128.wgsl). Needs
// dp4a_setup.wgsl's names and dp4a_ops.wgsl.
  let top = row0 + ty * 4u;
  let bottom = top + 64u;
  let a_scale0 = load_a_scale(top);
  let a_scale1 = load_a_scale(top + 1u);
  let a_scale2 = load_a_scale(top + 2u);
  let a_scale3 = load_a_scale(top + 3u);
  let a_scale4 = load_a_scale(bottom);
  let a_scale5 = load_a_scale(bottom + 1u);
  let a_scale6 = load_a_scale(bottom + 2u);
  let a_scale7 = load_a_scale(bottom + 3u);
