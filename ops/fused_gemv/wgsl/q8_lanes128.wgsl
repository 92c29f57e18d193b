// fused_gemv/q8_lanes128: as q8_lanes32 with 128 invocations across K, one vec4<u32> of each row in
// flight, and the partial sums reduced in stages of 16 then 8. The layout for q8 weights below 3,072 rows.
// #include "io.wgsl"
const LANES = 128u; // invocations across K per row group
const IN_FLIGHT = 1u; // vec4<u32> of each row loaded before any is multiplied
// #include "q8_lanes.wgsl"

@compute @workgroup_size(128, 2)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  q8_lanes(wid, nwg, lid);
}
