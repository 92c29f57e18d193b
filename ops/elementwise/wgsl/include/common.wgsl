// The bindings, the workgroup size and the operation shared by elementwise/kernel and
// elementwise/rows (they differ in Params, in PER and in how b is indexed).
@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> b: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const WG = 256u;  // invocations per workgroup

fn apply(x: vec4f, y: vec4f) -> vec4f {
  if (params.op == 0u) {
    return x + y;
  }
  return x * y;
}
