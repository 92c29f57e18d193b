// elementwise/kernel: out[i] = a[i] (+|*) b[i] over two equally sized arrays.
//
// Streamed as vec4s: each invocation moves PER vec4s of each array per block, all loads issued
// before the first store (bytes in flight hide memory latency), neighbouring invocations on
// neighbouring vec4s. Blocks of WG * PER vec4s are dealt to workgroups in a grid-stride loop, so a
// grid capped at 65,535 workgroups covers any length without folding into y; the host sizes the
// grid as ceil(n / (4 * WG * PER)), capped. The n % 4 elements past the last whole vec4 are written
// one component at a time by invocation 0, so nothing past element n - 1 is ever written. The
// bindings are 16-byte padded (ResidentDevice.alloc), so the last partial vec4 is readable.
struct Params {
  n: u32,      // elements
  op: u32,     // 0 = add, 1 = multiply
}

// #include "common.wgsl"

const PER = 4u;  // vec4s per invocation per block (mod.ts sizes the grid with the same numbers)

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let quads = params.n / 4u;
  let span = WG * PER;
  for (var block = wid.x * span; block < quads; block += groups.x * span) {
    let i = block + lid.x;
    if (block + span <= quads) {
      let a0 = a[i];
      let a1 = a[i + WG];
      let a2 = a[i + 2u * WG];
      let a3 = a[i + 3u * WG];
      let b0 = b[i];
      let b1 = b[i + WG];
      let b2 = b[i + 2u * WG];
      let b3 = b[i + 3u * WG];
      out[i] = apply(a0, b0);
      out[i + WG] = apply(a1, b1);
      out[i + 2u * WG] = apply(a2, b2);
      out[i + 3u * WG] = apply(a3, b3);
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = apply(a[j], b[j]);
        }
      }
    }
  }
  let rest = params.n % 4u;
  if (rest != 0u && wid.x == 0u && lid.x == 0u) {
    let v = apply(a[quads], b[quads]);
    out[quads].x = v.x;
    if (rest > 1u) {
      out[quads].y = v.y;
    }
    if (rest > 2u) {
      out[quads].z = v.z;
    }
  }
}
