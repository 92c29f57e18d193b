// activation/kernel: out[i] = f(x[i]) for one of relu2, silu, elu, tanh, gelu, gelu_tanh.
//
// Streamed as vec4s, as elementwise/kernel: PER vec4s per invocation per block, all loads before the
// first store, neighbouring invocations on neighbouring vec4s; blocks of WG * PER vec4s dealt to a
// grid of at most 65,535 workgroups in a grid-stride loop (the host sizes the grid as
// ceil(n / (4 * WG * PER)), capped); the n % 4 trailing elements written one component at a time by
// invocation 0, so nothing past element n - 1 is written. The bindings are 16-byte padded
// (ResidentDevice.alloc), so the last partial vec4 is readable.
//
// The kind is uniform: main switches on it once and runs that kind's own copy of the loop, so each
// loop body is straight-line code from its loads to its stores, with no switch per vec4. On the
// H200 (2026-11-30, GPU timestamps, warm clocks, 2^26 elements) that alone moved relu2 from 85.2%
// to 88.6% of the bandwidth roofline at 4 vec4s per invocation. PER is 2 (twice the workgroups of
// 4): 86.6-89.8% across the kinds, against 86.2-88.6% at 4 and 83.8-87.2% at 8; only elu and tanh
// ran faster at 4, by 1.5 and 0.3 points.
//
// The functions are written on vec4s, branch-free (both sides of a piecewise definition are
// formed and one selected), so each component gets exactly what a scalar evaluation would give.
// Every exp() here has an argument <= 0 and every argument is clamped where the function has
// reached its limit in f32 (or, for a side that select() discards, to that side's own range), so no
// intermediate overflows for any finite x; the tails are formed so they do not cancel.
struct Params {
  n: u32,      // elements
  kind: u32,   // 0 relu2, 1 silu, 2 elu, 3 tanh, 4 gelu, 5 gelu_tanh
  alpha: f32,  // elu's alpha
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

const WG = 256u;  // invocations per workgroup
const PER = 2u;   // vec4s per invocation per block (mod.ts sizes the grid with the same numbers)

const SQRT_2_OVER_PI: f32 = 0.7978845608028654;

// e^v - 1 for v <= 0, without the cancellation of exp(v) - 1 near 0: a Taylor polynomial there
// (degree 9: relative error below 1e-9 for |v| < 0.5), exp(v) - 1 beyond. Each side is evaluated
// on its own range only (the polynomial at max(v, -0.5), exp at min(v, 0)).
fn expm1_nonpositive(v: vec4f) -> vec4f {
  let s = max(v, vec4f(-0.5));
  let p = 1.0 / 2.0 + s * (1.0 / 6.0 + s * (1.0 / 24.0 + s * (1.0 / 120.0 + s * (1.0 / 720.0 +
    s * (1.0 / 5040.0 + s * (1.0 / 40320.0 + s * (1.0 / 362880.0)))))));
  return select(exp(min(v, vec4f(0.0))) - 1.0, s + s * s * p, v > vec4f(-0.5));
}

// #include "silu_gelu.wgsl"

fn f_relu2(v: vec4f) -> vec4f {
  let r = max(v, vec4f(0.0));
  return keep_nan(v, r * r);
}

fn f_elu(v: vec4f) -> vec4f {
  return keep_nan(v, select(params.alpha * expm1_nonpositive(min(v, vec4f(0.0))), v, v > vec4f(0.0)));
}

// tanh|v| = -m / (2 + m) with m = e^(-2|v|) - 1 in (-1, 0]; tanh(20) is 1 in f32.
fn f_tanh(v: vec4f) -> vec4f {
  let m = expm1_nonpositive(-2.0 * min(abs(v), vec4f(20.0)));
  return keep_nan(v, sign(v) * (-m / (2.0 + m)));
}

// x/2 * (1 + tanh(u)) = x * sigmoid(2u). Beyond |x| = 20 the sigmoid is 0 or 1 in f32, so x is
// clamped there before it is cubed, and nothing overflows.
fn f_gelu_tanh(v: vec4f) -> vec4f {
  let c = clamp(v, vec4f(-20.0), vec4f(20.0));
  return keep_nan(v, v * sigmoid(2.0 * SQRT_2_OVER_PI * (c + 0.044715 * c * c * c)));
}

// The kind's function, for the trailing partial vec4.
fn activate(v: vec4f) -> vec4f {
  switch (params.kind) {
    case 0u: {
      return f_relu2(v);
    }
    case 1u: {
      return f_silu(v);
    }
    case 2u: {
      return f_elu(v);
    }
    case 3u: {
      return f_tanh(v);
    }
    case 4u: {
      return f_gelu(v);
    }
    default: {
      return f_gelu_tanh(v);
    }
  }
}

// The grid-stride loop over the whole vec4s, one copy per kind, identical but for the function it
// applies (WGSL cannot pass a function), so that no loop body holds a switch.
fn stream_relu2(wid: vec3u, lid: vec3u, groups: vec3u) {
  let quads = params.n / 4u;
  let span = WG * PER;
  for (var block = wid.x * span; block < quads; block += groups.x * span) {
    let i = block + lid.x;
    if (block + span <= quads) {
      let x0 = x[i];
      let x1 = x[i + WG];
      out[i] = f_relu2(x0);
      out[i + WG] = f_relu2(x1);
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = f_relu2(x[j]);
        }
      }
    }
  }
}

fn stream_silu(wid: vec3u, lid: vec3u, groups: vec3u) {
  let quads = params.n / 4u;
  let span = WG * PER;
  for (var block = wid.x * span; block < quads; block += groups.x * span) {
    let i = block + lid.x;
    if (block + span <= quads) {
      let x0 = x[i];
      let x1 = x[i + WG];
      out[i] = f_silu(x0);
      out[i + WG] = f_silu(x1);
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = f_silu(x[j]);
        }
      }
    }
  }
}

fn stream_elu(wid: vec3u, lid: vec3u, groups: vec3u) {
  let quads = params.n / 4u;
  let span = WG * PER;
  for (var block = wid.x * span; block < quads; block += groups.x * span) {
    let i = block + lid.x;
    if (block + span <= quads) {
      let x0 = x[i];
      let x1 = x[i + WG];
      out[i] = f_elu(x0);
      out[i + WG] = f_elu(x1);
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = f_elu(x[j]);
        }
      }
    }
  }
}

fn stream_tanh(wid: vec3u, lid: vec3u, groups: vec3u) {
  let quads = params.n / 4u;
  let span = WG * PER;
  for (var block = wid.x * span; block < quads; block += groups.x * span) {
    let i = block + lid.x;
    if (block + span <= quads) {
      let x0 = x[i];
      let x1 = x[i + WG];
      out[i] = f_tanh(x0);
      out[i + WG] = f_tanh(x1);
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = f_tanh(x[j]);
        }
      }
    }
  }
}

fn stream_gelu(wid: vec3u, lid: vec3u, groups: vec3u) {
  let quads = params.n / 4u;
  let span = WG * PER;
  for (var block = wid.x * span; block < quads; block += groups.x * span) {
    let i = block + lid.x;
    if (block + span <= quads) {
      let x0 = x[i];
      let x1 = x[i + WG];
      out[i] = f_gelu(x0);
      out[i + WG] = f_gelu(x1);
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = f_gelu(x[j]);
        }
      }
    }
  }
}

fn stream_gelu_tanh(wid: vec3u, lid: vec3u, groups: vec3u) {
  let quads = params.n / 4u;
  let span = WG * PER;
  for (var block = wid.x * span; block < quads; block += groups.x * span) {
    let i = block + lid.x;
    if (block + span <= quads) {
      let x0 = x[i];
      let x1 = x[i + WG];
      out[i] = f_gelu_tanh(x0);
      out[i + WG] = f_gelu_tanh(x1);
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          out[j] = f_gelu_tanh(x[j]);
        }
      }
    }
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  switch (params.kind) {
    case 0u: {
      stream_relu2(wid, lid, groups);
    }
    case 1u: {
      stream_silu(wid, lid, groups);
    }
    case 2u: {
      stream_elu(wid, lid, groups);
    }
    case 3u: {
      stream_tanh(wid, lid, groups);
    }
    case 4u: {
      stream_gelu(wid, lid, groups);
    }
    default: {
      stream_gelu_tanh(wid, lid, groups);
    }
  }
  let quads = params.n / 4u;
  let rest = params.n % 4u;
  if (rest != 0u && wid.x == 0u && lid.x == 0u) {
    let v = activate(x[quads]);
    out[quads].x = v.x;
    if (rest > 1u) {
      out[quads].y = v.y;
    }
    if (rest > 2u) {
      out[quads].z = v.z;
    }
  }
}
