// elementwise/rows: out[s, d] = a[s, d] (+|*) b[d], a is [S, D] and b is [D] (broadcast from the right).
//
// Streamed like elementwise/kernel: a and out as vec4s, PER per invocation per block, all loads
// before the first store, blocks dealt to a grid of at most 65,535 workgroups in a grid-stride
// loop, the n % 4 trailing elements written one component at a time by invocation 0. b is small and
// stays in cache: when D % 4 == 0 every vec4 of a lies in one row and starts on a multiple of 4 in
// it, so its right-hand side is the vec4 b[q % (D / 4)]; otherwise each component finds its own
// column. The bindings are 16-byte padded (ResidentDevice.alloc), so partial vec4s are readable.
struct Params {
  n: u32,      // S * D
  d: u32,      // D
  op: u32,     // 0 = add, 1 = multiply
}

// #include "common.wgsl"

// b's element at column `col`.
fn b_at(col: u32) -> f32 {
  return b[col / 4u][col % 4u];
}

// The right-hand side of a's vec4 number q (elements 4q .. 4q + 3).
fn rhs(q: u32) -> vec4f {
  let d = params.d;
  if (d % 4u == 0u) {
    return b[q % (d / 4u)];
  }
  let col = (4u * q) % d;
  return vec4f(b_at(col), b_at((col + 1u) % d), b_at((col + 2u) % d), b_at((col + 3u) % d));
}

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
      let b0 = rhs(i);
      let b1 = rhs(i + WG);
      let b2 = rhs(i + 2u * WG);
      let b3 = rhs(i + 3u * WG);
      out[i] = apply(a0, b0);
      out[i + WG] = apply(a1, b1);
      out[i + 2u * WG] = apply(a2, b2);
      out[i + 3u * WG] = apply(a3, b3);
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = apply(a[j], rhs(j));
        }
      }
    }
  }
  let rest = params.n % 4u;
  if (rest != 0u && wid.x == 0u && lid.x == 0u) {
    let v = apply(a[quads], rhs(quads));
    out[quads].x = v.x;
    if (rest > 1u) {
      out[quads].y = v.y;
    }
    if (rest > 2u) {
      out[quads].z = v.z;
    }
  }
}
