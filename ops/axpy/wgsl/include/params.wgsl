// The constants and params of axpy/kernel and axpy/inplace (mod.ts packs Params and sizes the grid
// with WG and PER). probe_a, probe_x, probe_y: the fma() probe, see exact_fma.wgsl.
const WG = 256u;  // invocations per workgroup
const PER = 4u;   // vec4s per invocation per block (mod.ts sizes the grid with the same numbers)

struct Params {
  n: u32,        // elements
  a: f32,        // the scalar
  probe_a: f32,  // f32(0.1)
  probe_x: f32,  // 3
  probe_y: f32,  // -f32(0.3)
}
