// matvec/q8row: y[n] = scale[n] * sum_k code[n, k] * x[k] (W8A32). The weight is [N, ceil(K/4)] u32,
// four two's-complement codes per word, least significant byte first; scale is [N]; x is [K].
// Same layout as matvec/kernel: four rows per workgroup, 64 invocations per row, split-K, partial
// sums reduced in workgroup memory. The row's scale multiplies the reduced dot product once.
// When K % 16 == 0 a row is a whole number of vec4<u32> and each load brings 16 codes; otherwise
// one word at a time, and the last word of a row, whose high bytes are padding, is read with the
// x lanes past K replaced by 0 so that neither the padding codes nor whatever follows x count.
// More than 65,535 workgroups fold into y: group = id.x + id.y * num_workgroups.x, rows bound-checked.
struct Params {
  n: u32,  // rows, length of y
  k: u32,  // columns, length of x
}

@group(0) @binding(0) var<storage, read> weight: array<vec4u>;
@group(0) @binding(1) var<storage, read> scale: array<f32>;
@group(0) @binding(2) var<storage, read> x: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

const LANES = 64u;  // invocations per row
const ROWS = 4u;    // rows per workgroup

var<workgroup> partial: array<f32, LANES * ROWS>;

// The four codes of a word: each byte shifted to the top of an i32, then arithmetic-shifted back
// down, which sign-extends it.
fn codes(word: u32) -> vec4f {
  return vec4f((vec4i(bitcast<i32>(word)) << vec4u(24u, 16u, 8u, 0u)) >> vec4u(24u));
}

@compute @workgroup_size(64, 4)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
  let row = (wid.x + wid.y * groups.x) * ROWS + lid.y;
  let lane = lid.x;
  let k = params.k;
  var acc = 0.0;
  if (row < params.n) {
    if (k % 16u == 0u) {
      let blocks = k / 16u;
      let base = row * blocks;
      for (var i = lane; i < blocks; i += LANES) {
        let q = weight[base + i];
        acc += dot(codes(q.x), x[4u * i]) + dot(codes(q.y), x[4u * i + 1u]) +
          dot(codes(q.z), x[4u * i + 2u]) + dot(codes(q.w), x[4u * i + 3u]);
      }
    } else {
      let words = (k + 3u) / 4u;
      let full = k / 4u;
      let base = row * words;
      for (var j = lane; j < full; j += LANES) {
        let e = base + j;
        acc += dot(codes(weight[e / 4u][e % 4u]), x[j]);
      }
      if (full < words && lane == full % LANES) {
        let e = base + full;
        let live = vec4u(0u, 1u, 2u, 3u) < vec4u(k % 4u);
        acc += dot(codes(weight[e / 4u][e % 4u]), select(vec4f(0.0), x[full], live));
      }
    }
  }

  let slot = lid.y * LANES + lane;
  partial[slot] = acc;
  workgroupBarrier();
  for (var stride = LANES / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      partial[slot] += partial[slot + stride];
    }
    workgroupBarrier();
  }
  if (lane == 0u && row < params.n) {
    y[row] = scale[row] * partial[slot];
  }
}
