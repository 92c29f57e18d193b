// k-steps 0-7 of the block in the stages at ia (a) and ib (b), written out rather than looped over
// (see kernel.wgsl).
    k_step(ia, ib);
    k_step(ia + 1u * LANES, ib + 1u * LANES);
    k_step(ia + 2u * LANES, ib + 2u * LANES);
    k_step(ia + 3u * LANES, ib + 3u * LANES);
    k_step(ia + 4u * LANES, ib + 4u * LANES);
    k_step(ia + 5u * LANES, ib + 5u * LANES);
    k_step(ia + 6u * LANES, ib + 6u * LANES);
    k_step(ia + 7u * LANES, ib + 7u * LANES);
