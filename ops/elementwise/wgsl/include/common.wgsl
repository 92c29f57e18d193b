// The bindings, the block geometry and the operation shared by elementwise/kernel and
// elementwise/rows (they differ in Params and in how b is indexed).
@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> b: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const WG = 256u;  // invocations per workgroup
const PER = 4u;   // vec4s per invocation per block (mod.ts sizes the grid with the same numbers)

fn apply(x: vec4f, y: vec4f) -> vec4f {
  if (params.op == 0u) {
    return x + y;
  }
  return x * y;
}
