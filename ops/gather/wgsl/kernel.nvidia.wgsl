// gather/kernel.nvidia: out[n, d] = table[index[n], d], or 0 when index[n] is outside [0, rows);
// tuned for bandwidth.
//
// The output is streamed as vec4s: each invocation moves PER vec4s per block of WG * PER, all four
// loads issued before the first store, neighbouring invocations on neighbouring vec4s; blocks are
// dealt to workgroups in a grid-stride loop over however many workgroups the dispatch has, so the
// host never folds the grid (mod.ts dispatches min(blocks, 65,535)). When cols is a multiple of 4, a
// vec4 of the output is one aligned vec4 of one table row; otherwise its four elements are found
// one by one. The n % 4 elements past the last whole vec4 are written one component at a time, so
// nothing past element indexLength * cols - 1 is written. Bindings are 16-byte padded (ResidentDevice.alloc).
struct Params {
  total: u32,  // indexLength * cols, output elements
  d: u32,      // cols, columns
  v: u32,      // rows, table rows (< 2^31)
}

@group(0) @binding(0) var<storage, read> table: array<vec4f>;
@group(0) @binding(1) var<storage, read> index: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const WG: u32 = 256u;
const PER: u32 = 4u;

// Output element e. A negative index reinterpreted as u32 is at least 2^31 > rows, so one comparison
// rejects both ends.
fn element(e: u32) -> f32 {
  let n = e / params.d;
  let row = bitcast<u32>(index[n]);
  if (row >= params.v) {
    return 0.0;
  }
  let i = row * params.d + (e - n * params.d);
  return table[i >> 2u][i & 3u];
}

// Output vec4 q: with cols % 4 == 0, four neighbouring columns of one row.
fn quad(q: u32) -> vec4f {
  if ((params.d & 3u) == 0u) {
    let e = 4u * q;
    let n = e / params.d;
    let row = bitcast<u32>(index[n]);
    if (row >= params.v) {
      return vec4f(0.0);
    }
    return table[(row * params.d + (e - n * params.d)) >> 2u];
  }
  return vec4f(element(4u * q), element(4u * q + 1u), element(4u * q + 2u), element(4u * q + 3u));
}

@compute @workgroup_size(256)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) group: vec3u,
  @builtin(num_workgroups) groups: vec3u,
) {
  let first = group.x + group.y * groups.x;
  let quads = params.total / 4u;
// #include "quad_blocks.wgsl"
  let rest = params.total % 4u;
  if (rest != 0u && first == 0u && lid == 0u) {
    for (var j = 0u; j < rest; j++) {
      out[quads][j] = element(4u * quads + j);
    }
  }
}
