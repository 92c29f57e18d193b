// A gathered vec4 stream: the entry point of upsample/kernel, whose every vec4 of `out` is computed
// by the kernel's `fn quad(q: u32) -> vec4f`. Four vec4s per invocation per block of WG * PER, every
// read before any write so that they are in flight together, blocks dealt to workgroups in a
// grid-stride loop; a vec4 running past `params.n` is written one element at a time. The kernel
// declares `out` (array<vec4f>), `params.n` (elements of out), `WG` (256) and `PER` (4), and
// includes vec4_parts.wgsl for `store_part`. (pad took the same stream until a one-vec4 kernel
// measured faster for it: ops/pad/mod.ts.)

// Writes vec4 q of out: whole, or its first elements one at a time when it runs past n.
fn put(q: u32, v: vec4f) {
  let e = 4u * q;
  if (e + 4u <= params.n) {
    out[q] = v;
  } else {
    store_part(e, params.n - e, v);
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32,
        @builtin(num_workgroups) groups: vec3u) {
  let quads = (params.n + 3u) / 4u;
  let span = WG * PER;
  for (var block = wid.x * span; block < quads; block += groups.x * span) {
    let q = block + lid;
    if (block + span <= quads) {
      // Every read of the four vec4s before any write, so that they are in flight together.
      let v0 = quad(q);
      let v1 = quad(q + WG);
      let v2 = quad(q + 2u * WG);
      let v3 = quad(q + 3u * WG);
      put(q, v0);
      put(q + WG, v1);
      put(q + 2u * WG, v2);
      put(q + 3u * WG, v3);
    } else {
      for (var k = 0u; k < PER; k++) {
        if (q + k * WG < quads) {
          put(q + k * WG, quad(q + k * WG));
        }
      }
    }
  }
}
