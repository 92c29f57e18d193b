// Stages STAGE_WORDS words of row row0 + stage_row of a, from word k0w + stage_w, into a_t
// (transposed: slot (stage_w + j) * LANES + stage_row / 4, component stage_row % 4). Needs
// dp4a_setup.wgsl's names and the loop's k0w.
    for (var j = 0u; j < STAGE_WORDS; j++) {
      let slot = (stage_w + j) * LANES + stage_row / 4u;
      a_t[slot][stage_row % 4u] = load_a(row0 + stage_row, k0w + stage_w + j);
    }
