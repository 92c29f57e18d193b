// axpy/inplace: y[i] = y[i] + a * x[i], rounded once, through one read_write binding of y (binding
// one buffer as both y and out of axpy/kernel instead is a WebGPU validation error).
//
// Streamed as vec4s, as axpy/kernel: PER vec4s of x and y per invocation per block, all loads before
// the first store; blocks dealt to a grid of at most 65,535 workgroups in a grid-stride loop; the
// n % 4 trailing elements updated one component at a time by invocation 0, so nothing past element
// n - 1 is written. The bindings are 16-byte padded (ResidentDevice.alloc).
//
// Rounded once: fma() where the device fuses it, else an exact integer fallback, chosen per
// dispatch by a probe (include/exact_fma.wgsl says how and why).

// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

// #include "exact_fma.wgsl"

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let quads = params.n / 4u;
  let fused = fma(params.probe_a, params.probe_x, params.probe_y) != 0.0;
  if (fused) {
    let a = vec4f(params.a);
    let span = WG * PER;
    for (var block = wid.x * span; block < quads; block += groups.x * span) {
      let i = block + lid.x;
      if (block + span <= quads) {
// #include "block_loads.wgsl"
        y[i] = fma(a, x0, y0);
        y[i + WG] = fma(a, x1, y1);
        y[i + 2u * WG] = fma(a, x2, y2);
        y[i + 3u * WG] = fma(a, x3, y3);
      } else {
        for (var k = 0u; k < PER; k++) {
          let j = i + k * WG;
          if (j < quads) {
            y[j] = fma(a, x[j], y[j]);
          }
        }
      }
    }
  } else {
    for (var q = wid.x * WG + lid.x; q < quads; q += groups.x * WG) {
      y[q] = exact_fma4(params.a, x[q], y[q]);
    }
  }
  let rest = params.n % 4u;
  if (rest != 0u && wid.x == 0u && lid.x == 0u) {
// #include "tail_value.wgsl"
    y[quads].x = v.x;
    if (rest > 1u) {
      y[quads].y = v.y;
    }
    if (rest > 2u) {
      y[quads].z = v.z;
    }
  }
}
