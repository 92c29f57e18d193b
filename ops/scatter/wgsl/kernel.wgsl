// scatter/kernel: out[n, index[n, k]] += src[n, k] for every (n, k); an index outside [0, cols) is dropped.
// One source element per invocation; the workgroup grid may be folded into y when it exceeds 65,535.
// out must be zero when the dispatch starts: the kernel only adds to it.
struct Params {
  total: u32,  // rows * indexCols, source elements
  k: u32,      // indexCols, source columns
  d: u32,      // cols, output columns (< 2^31)
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read> index: array<i32>;
// f32 values held as their bits: WGSL has atomics on u32 and i32 only.
@group(0) @binding(2) var<storage, read_write> out: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> params: Params;

// out[slot] += value as an f32 add, retried until no other invocation changed the slot in between.
// Comparing bits (not floats) ends the loop even when the slot holds a NaN.
fn atomic_add_f32(slot: u32, value: f32) {
  var seen = atomicLoad(&out[slot]);
  loop {
    let sum = bitcast<u32>(bitcast<f32>(seen) + value);
    let result = atomicCompareExchangeWeak(&out[slot], seen, sum);
    if (result.exchanged) {
      break;
    }
    seen = result.old_value;
  }
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= params.total) {
    return;
  }
  // A negative index reinterpreted as u32 is at least 2^31 > cols, so one comparison drops both ends.
  let column = bitcast<u32>(index[i]);
  if (column >= params.d) {
    return;
  }
  let n = i / params.k;
  atomic_add_f32(n * params.d + column, src[i]);
}
