// The start of main in the pipelined 128 x 128 dp4a tiles (q8row_dp4a_pipelined,
// q4g128_dp4a_pipelined and their fused forms): dp4a_origin.wgsl's tile and invocation, and what each
// invocation loads per step: STAGE_WORDS (8) consecutive words, from stage_w, of one row, stage_row,
// of a's block, and the weight's codes of the same words of the same row of its block. Invocations
// 0..127 take words 0..7 of rows 0..127, invocations 128..255 words 8..15 of the same rows:
// consecutive invocations take consecutive rows at the same word, so a warp's store of one word into
// the transposed stage (vec4u w * LANES + row / 4, component row % 4: the u32 at 128 w + row) writes
// 32 consecutive u32s, one per bank. (The single-stage tiles give two invocations to a row, two to a
// bank.) Needs main's wid, groups and lid, params and dp4a_tile128_pipelined.wgsl.
// #include "dp4a_origin.wgsl"
  let stage_row = lid % TILE;
  let stage_w = (lid / TILE) * STAGE_WORDS;
