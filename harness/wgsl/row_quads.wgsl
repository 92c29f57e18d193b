// The PER = 8 quads an invocation takes of one chunk of a row (quads base + lane + k t, k = 0..7), as
// named members q0..q7, and the ragged paths' read of them (rmsnorm's and layernorm's). Named members,
// never an array indexed in a loop: naga bounds-checks every index of a function-scope array and the
// driver may keep such an array in local memory; named values stay in registers. fetch_quads expects
// the including kernel's fetch(j) -> vec4f (the row's quad j, 0 outside the row).
struct Quads {
  q0: vec4f,
  q1: vec4f,
  q2: vec4f,
  q3: vec4f,
  q4: vec4f,
  q5: vec4f,
  q6: vec4f,
  q7: vec4f,
}

// The row's quads of the chunk at `base`, through fetch (d % 4 != 0).
fn fetch_quads(base: u32, lane: u32, t: u32) -> Quads {
// #include "row_chunk_quads.wgsl"
  return Quads(fetch(j0), fetch(j1), fetch(j2), fetch(j3), fetch(j4), fetch(j5), fetch(j6), fetch(j7));
}
