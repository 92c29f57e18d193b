// fused_gemv/q8_lanes32: out (op)= act(W · in(x)) for a q8 weight (matvec's q8row format: [n, ceil(k/4)]
// words, a scale a row): 32 invocations across K for each group of four rows, two row groups (8 rows a
// workgroup), two vec4<u32> of each row in flight (16 codes each), decoded as q8row.nvidia does and the
// finished dot product scaled; with NORM the squares of x summed from the same loads; the 32 partial
// sums added by one invocation as it writes. Rows not starting on a 16-byte boundary (k % 16 != 0) read
// a word at a time. The layout for q8 weights of 6,144 rows or more.
// #include "io.wgsl"
const LANES = 32u; // invocations across K per row group
const IN_FLIGHT = 2u; // vec4<u32> of each row loaded before any is multiplied
// #include "q8_lanes.wgsl"

@compute @workgroup_size(32, 2)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  q8_lanes(wid, nwg, lid);
}
