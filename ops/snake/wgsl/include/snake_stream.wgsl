// The grid-stride walk of both snake entry points over x [N, C, L], viewed as quads (vec4s): quad q
// holds elements 4q .. 4q + 3, and element i takes channel (i / L) % C. Blocks of WG * PER quads
// are dealt to the workgroups, PER loads per invocation issued before the first store. When L % 4
// == 0 a quad lies in one channel, so its parameters are one load each; otherwise each component
// finds its own channel. The n % 4 trailing elements are written one at a time by invocation 0 of
// workgroup 0, so nothing past element n - 1 is written. Needs `fn divisor_of(c)` (alpha or beta), `alpha`,
// `x`, `out` and `params` declared by the entry point.
struct Params {
  n: u32,  // elements, N * C * L
  c: u32,  // channels
  l: u32,  // length of a channel's row
}

const WG = 256u;  // invocations per workgroup
const PER = 2u;   // quads per invocation per block (mod.ts sizes the grid with the same numbers)
const EPS: f32 = 1e-9; // upstream's epsilon, inside the reciprocal

fn channel(i: u32) -> u32 {
  return (i / params.l) % params.c;
}

// sin(a v)^2 / (d + EPS) + v, the reciprocal first as upstream forms it.
fn snake_of(v: f32, c: u32) -> f32 {
  let s = sin(alpha[c] * v);
  return v + (1.0 / (divisor_of(c) + EPS)) * (s * s);
}

fn snake_quad(q: u32, v: vec4f) -> vec4f {
  let i = 4u * q;
  if (params.l % 4u == 0u) {
    let c = channel(i);
    let s = sin(alpha[c] * v);
    return v + (1.0 / (divisor_of(c) + EPS)) * (s * s);
  }
  return vec4f(snake_of(v.x, channel(i)), snake_of(v.y, channel(i + 1u)), snake_of(v.z, channel(i + 2u)),
    snake_of(v.w, channel(i + 3u)));
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let quads = params.n / 4u;
  let span = WG * PER;
  for (var block = wid.x * span; block < quads; block += groups.x * span) {
    let i = block + lid;
    if (block + span <= quads) {
      let x0 = x[i];
      let x1 = x[i + WG];
      out[i] = snake_quad(i, x0);
      out[i + WG] = snake_quad(i + WG, x1);
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = snake_quad(j, x[j]);
        }
      }
    }
  }
  if (wid.x == 0u && lid == 0u) {
    for (var e = 4u * quads; e < params.n; e++) {
      out[e / 4u][e % 4u] = snake_of(x[e / 4u][e % 4u], channel(e));
    }
  }
}
