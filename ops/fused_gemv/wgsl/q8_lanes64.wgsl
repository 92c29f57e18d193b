// fused_gemv/q8_lanes64: as q8_lanes32 with 64 invocations across K and the partial sums reduced in two
// stages of 8 (a barrier between). The layout for q8 weights of 3,072 to 6,143 rows.
// #include "io.wgsl"
const LANES = 64u; // invocations across K per row group
const IN_FLIGHT = 2u; // vec4<u32> of each row loaded before any is multiplied
// #include "q8_lanes.wgsl"

@compute @workgroup_size(64, 2)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  q8_lanes(wid, nwg, lid);
}
