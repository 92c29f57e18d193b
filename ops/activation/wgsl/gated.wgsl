// activation/gated: out[i] = f(gate[i]) * up[i], f = silu (swiglu: the SwiGLU of a Llama / Qwen3 /
// Z-Image feed-forward, w2(silu(w1 x) * w3 x)) or gelu in its erf form (geglu).
//
// Streamed as activation/kernel streams one input: PER vec4s of each input per invocation per
// block, all loads before the first store, neighbouring invocations on neighbouring vec4s; blocks of
// WG * PER vec4s dealt to a grid of at most 65,535 workgroups in a grid-stride loop (the host sizes
// the grid as ceil(n / (4 * WG * PER)), capped); the n % 4 trailing elements written one component
// at a time by invocation 0. The bindings are 16-byte padded (ResidentDevice.alloc), so the last
// partial vec4 is readable. The kind is uniform: main switches on it once into that kind's own copy
// of the loop.
struct Params {
  n: u32,     // elements
  kind: u32,  // 0 swiglu, 1 geglu
}

@group(0) @binding(0) var<storage, read> gate: array<vec4f>;
@group(0) @binding(1) var<storage, read> up: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const WG = 256u;  // invocations per workgroup
const PER = 2u;   // vec4s of each input per invocation per block (mod.ts sizes the grid with the same numbers)

// #include "silu_gelu.wgsl"

fn stream_swiglu(wid: vec3u, lid: vec3u, groups: vec3u) {
  let quads = params.n / 4u;
  let span = WG * PER;
  for (var block = wid.x * span; block < quads; block += groups.x * span) {
    let i = block + lid.x;
    if (block + span <= quads) {
      let g0 = gate[i];
      let g1 = gate[i + WG];
      let u0 = up[i];
      let u1 = up[i + WG];
      out[i] = f_silu(g0) * u0;
      out[i + WG] = f_silu(g1) * u1;
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = f_silu(gate[j]) * up[j];
        }
      }
    }
  }
}

fn stream_geglu(wid: vec3u, lid: vec3u, groups: vec3u) {
  let quads = params.n / 4u;
  let span = WG * PER;
  for (var block = wid.x * span; block < quads; block += groups.x * span) {
    let i = block + lid.x;
    if (block + span <= quads) {
      let g0 = gate[i];
      let g1 = gate[i + WG];
      let u0 = up[i];
      let u1 = up[i + WG];
      out[i] = f_gelu(g0) * u0;
      out[i + WG] = f_gelu(g1) * u1;
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = f_gelu(gate[j]) * up[j];
        }
      }
    }
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  if (params.kind == 0u) {
    stream_swiglu(wid, lid, groups);
  } else {
    stream_geglu(wid, lid, groups);
  }
  let quads = params.n / 4u;
  let rest = params.n % 4u;
  if (rest != 0u && wid.x == 0u && lid.x == 0u) {
    let g = gate[quads];
    let v = select(f_gelu(g), f_silu(g), params.kind == 0u) * up[quads];
    out[quads].x = v.x;
    if (rest > 1u) {
      out[quads].y = v.y;
    }
    if (rest > 2u) {
      out[quads].z = v.z;
    }
  }
}
