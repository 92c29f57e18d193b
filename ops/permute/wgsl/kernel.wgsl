// permute/kernel: out = x.permute(dims).contiguous() for a tensor of rank <= 6.
//
// One invocation per output element. params carries the output's shape and, for each output
// axis, the stride in x of the input axis it comes from, padded at the front to six axes with
// size 1 and stride 0. An invocation splits its output index into coordinates, last axis
// fastest, and gathers from the sum of coordinate * stride; the writes are consecutive.
// The grid may be folded into y beyond 65,535 workgroups.
struct Params {
  n: u32,  // elements
  size0: u32,
  size1: u32,
  size2: u32,
  size3: u32,
  size4: u32,
  size5: u32,
  stride0: u32,
  stride1: u32,
  stride2: u32,
  stride3: u32,
  stride4: u32,
  stride5: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.n) {
    return;
  }
  var sizes = array<u32, 6>(params.size0, params.size1, params.size2, params.size3, params.size4, params.size5);
  var strides = array<u32, 6>(
    params.stride0, params.stride1, params.stride2, params.stride3, params.stride4, params.stride5,
  );
  var rest = i;
  var source = 0u;
  for (var axis = 5; axis >= 0; axis--) {
    source += (rest % sizes[axis]) * strides[axis];
    rest /= sizes[axis];
  }
  out[i] = x[source];
}
