// elementwise/rows: out[s, d] = a[s, d] (+|*) b[d], a is [rows, cols] and b is [cols] (broadcast from the right).
//
// Streamed like elementwise/kernel: a and out as vec4s, PER per invocation per block, all loads
// before the first store, blocks dealt to a grid of at most 65,535 workgroups in a grid-stride
// loop, the n % 4 trailing elements written one component at a time by invocation 0. b is small and
// stays in cache. When cols % 4 == 0 every vec4 of a lies in one row and starts on a multiple of 4 in
// it, so its right-hand side is the vec4 of b at its column in vec4s, q mod (cols / 4); that column is
// carried rather than divided for: + WG (mod cols / 4) from one of an invocation's vec4s to the next,
// + the grid's span (mod cols / 4) from one of its blocks to the next. The operation is uniform, so it
// is chosen once, outside the loop, and each loop body is straight-line code from its loads to its
// stores. Otherwise (cols % 4 != 0) each component finds its own column. The bindings are 16-byte
// padded (ResidentDevice.alloc), so partial vec4s are readable.
//
// PER is 2 (twice the workgroups of 4). Measured on the H200 (2026-11-30, GPU timestamps, warm
// clocks), add, as a share of the bandwidth roofline: 89.8% at 16384 x 4096 and 49.5% at
// 1024 x 4096, against 87.5% and 49.1% for the same code at 4 vec4s per invocation and 87.8% and
// 45.1% for the kernel it replaced (4 vec4s, a division for each vec4's column, the operation
// chosen per vec4).
struct Params {
  n: u32,      // rows * cols
  d: u32,      // cols
  op: u32,     // 0 = add, 1 = multiply
}

// #include "common.wgsl"

const PER = 2u;  // vec4s per invocation per block (mod.ts sizes the grid with the same numbers)

// b's element at column `col`.
fn b_at(col: u32) -> f32 {
  return b[col / 4u][col % 4u];
}

// The right-hand side of a's vec4 number q (elements 4q .. 4q + 3) when cols % 4 != 0 (the only case
// with a partial last vec4, as n = rows * cols).
fn rhs(q: u32) -> vec4f {
  let d = params.d;
  let col = (4u * q) % d;
  return vec4f(b_at(col), b_at((col + 1u) % d), b_at((col + 2u) % d), b_at((col + 3u) % d));
}

// v mod dq, for v < 2 dq.
fn wrap(v: u32, dq: u32) -> u32 {
  return select(v, v - dq, v >= dq);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let quads = params.n / 4u;
  let span = WG * PER;
  if (params.d % 4u == 0u) {
    let dq = params.d / 4u;
    let step = WG % dq;
    let jump = (groups.x * span) % dq;
    // The column, in vec4s, of this invocation's first vec4 of the current block.
    var col = (wid.x * span + lid.x) % dq;
    if (params.op == 0u) {
      for (var block = wid.x * span; block < quads; block += groups.x * span) {
        let i = block + lid.x;
        if (block + span <= quads) {
          let a0 = a[i];
          let a1 = a[i + WG];
          let b0 = b[col];
          let b1 = b[wrap(col + step, dq)];
          out[i] = a0 + b0;
          out[i + WG] = a1 + b1;
        } else {
          var c = col;
          for (var k = 0u; k < PER; k++) {
            let j = i + k * WG;
            if (j < quads) {
              out[j] = a[j] + b[c];
            }
            c = wrap(c + step, dq);
          }
        }
        col = wrap(col + jump, dq);
      }
    } else {
      for (var block = wid.x * span; block < quads; block += groups.x * span) {
        let i = block + lid.x;
        if (block + span <= quads) {
          let a0 = a[i];
          let a1 = a[i + WG];
          let b0 = b[col];
          let b1 = b[wrap(col + step, dq)];
          out[i] = a0 * b0;
          out[i + WG] = a1 * b1;
        } else {
          var c = col;
          for (var k = 0u; k < PER; k++) {
            let j = i + k * WG;
            if (j < quads) {
              out[j] = a[j] * b[c];
            }
            c = wrap(c + step, dq);
          }
        }
        col = wrap(col + jump, dq);
      }
    }
  } else {
    for (var block = wid.x * span; block < quads; block += groups.x * span) {
      for (var k = 0u; k < PER; k++) {
        let j = block + lid.x + k * WG;
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
