// k-steps 0-15 of the block in the stages at ia (a) and ib (b), written out (see kernel.wgsl).
// #include "k_steps8.wgsl"
    k_step(ia + 8u * LANES, ib + 8u * LANES);
    k_step(ia + 9u * LANES, ib + 9u * LANES);
    k_step(ia + 10u * LANES, ib + 10u * LANES);
    k_step(ia + 11u * LANES, ib + 11u * LANES);
    k_step(ia + 12u * LANES, ib + 12u * LANES);
    k_step(ia + 13u * LANES, ib + 13u * LANES);
    k_step(ia + 14u * LANES, ib + 14u * LANES);
    k_step(ia + 15u * LANES, ib + 15u * LANES);
