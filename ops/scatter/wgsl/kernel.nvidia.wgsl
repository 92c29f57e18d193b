// scatter/kernel.nvidia: out[n, index[n, k]] += src[n, k] for every (n, k); an index outside
// [0, cols) is dropped. The same sums as the portable kernel (f32 adds by compare-exchange on the
// value's bits, in whatever order they land), with the adding moved into workgroup memory.
//
// mode "rows" (cols <= 4096, one row of the output fits in workgroup memory): each workgroup takes
// blocks of `rows` whole rows (rows * cols <= 4096), dealt in a grid-stride loop: it zeroes a
// workgroup-memory copy of the block's output rows, adds every source of those rows into it with
// workgroup atomics, then writes the rows out once, consecutively. Global memory sees src and
// index read once and out written once, with no atomic traffic; sources stream as vec4s when indexCols is
// a multiple of 4.
// mode "flat" (cols > 4096): one source element at a time over a grid-stride loop, added into out
// with global atomics, as the portable kernel; out must then be zero when the dispatch starts.
// The grid may have any shape; the host dispatches at most 65,535 workgroups in x.
struct Params {
  total: u32,  // rows * indexCols, source elements
  k: u32,      // indexCols, source columns
  d: u32,      // cols, output columns (< 2^31)
  n: u32,      // rows
  rows: u32,   // rows per block in mode "rows"; 0 selects mode "flat"
}

@group(0) @binding(0) var<storage, read> src: array<vec4f>;
@group(0) @binding(1) var<storage, read> index: array<vec4i>;
// f32 values held as their bits: WGSL has atomics on u32 and i32 only.
@group(0) @binding(2) var<storage, read_write> out: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> params: Params;

const WG: u32 = 256u;
const SLOTS: u32 = 4096u;  // floats of workgroup memory: 16 KiB

var<workgroup> sums: array<atomic<u32>, SLOTS>;

// sums[slot] += value as an f32 add, retried until no other invocation changed the slot in
// between. Comparing bits (not floats) ends the loop even when the slot holds a NaN.
fn add_local(slot: u32, value: f32) {
  var seen = atomicLoad(&sums[slot]);
  loop {
    let result = atomicCompareExchangeWeak(&sums[slot], seen, bitcast<u32>(bitcast<f32>(seen) + value));
    if (result.exchanged) {
      break;
    }
    seen = result.old_value;
  }
}

// The same on out, in global memory.
fn add_global(slot: u32, value: f32) {
  var seen = atomicLoad(&out[slot]);
  loop {
    let result = atomicCompareExchangeWeak(&out[slot], seen, bitcast<u32>(bitcast<f32>(seen) + value));
    if (result.exchanged) {
      break;
    }
    seen = result.old_value;
  }
}

fn src_at(i: u32) -> f32 {
  return src[i >> 2u][i & 3u];
}

fn index_at(i: u32) -> u32 {
  // A negative index reinterpreted as u32 is at least 2^31 > cols, so one comparison drops both ends.
  return bitcast<u32>(index[i >> 2u][i & 3u]);
}

// A source value into the block's sums: `base` is the first slot of its row, `column` its index.
fn add_source(base: u32, column: u32, value: f32) {
  if (column < params.d) {
    add_local(base + column, value);
  }
}

fn rows_mode(lid: u32, first: u32, groups: u32) {
  let indexCols = params.k;
  let cols = params.d;
  let per = params.rows;
  let blocks = (params.n + per - 1u) / per;
  for (var b = first; b < blocks; b += groups) {
    let n0 = b * per;
    let count = min(per, params.n - n0);
    for (var s = lid; s < count * cols; s += WG) {
      atomicStore(&sums[s], 0u);
    }
    workgroupBarrier();
    let start = n0 * indexCols;
    let sources = count * indexCols;
    if ((indexCols & 3u) == 0u) {
      // Four sources of one row per vec4 (rows start on a vec4 when indexCols % 4 == 0).
      for (var q = lid; q < sources / 4u; q += WG) {
        let values = src[start / 4u + q];
        let columns = bitcast<vec4u>(index[start / 4u + q]);
        let base = ((4u * q) / indexCols) * cols;
        add_source(base, columns.x, values.x);
        add_source(base, columns.y, values.y);
        add_source(base, columns.z, values.z);
        add_source(base, columns.w, values.w);
      }
    } else {
      for (var j = lid; j < sources; j += WG) {
        add_source((j / indexCols) * cols, index_at(start + j), src_at(start + j));
      }
    }
    workgroupBarrier();
    let out0 = n0 * cols;
    for (var s = lid; s < count * cols; s += WG) {
      atomicStore(&out[out0 + s], atomicLoad(&sums[s]));
    }
    // The next block zeroes the sums only after every invocation has written this one out.
    workgroupBarrier();
  }
}

fn flat_mode(lid: u32, first: u32, groups: u32) {
  for (var i = first * WG + lid; i < params.total; i += groups * WG) {
    let column = index_at(i);
    if (column < params.d) {
      add_global((i / params.k) * params.d + column, src_at(i));
    }
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) group: vec3u,
  @builtin(num_workgroups) groups: vec3u,
) {
  let first = group.x + group.y * groups.x;
  if (params.rows > 0u) {
    rows_mode(lid, first, groups.x * groups.y);
  } else {
    flat_mode(lid, first, groups.x * groups.y);
  }
}
