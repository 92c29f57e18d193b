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
//
// Row blocks as in gather/kernel: this dispatch owns the output rows whose index falls in its block
// [row0, row0 + block_rows), and with `first` those whose index is outside [0, rows). A vec4 of the
// output whose four elements it owns is stored whole (every vec4, for a table in one binding); one
// that straddles output rows of other blocks is stored component by component, its owned ones only.
struct Params {
  total: u32,       // indexLength * cols, output elements
  d: u32,           // cols, columns
  v: u32,           // rows, table rows (< 2^31)
  row0: u32,        // the block's first row
  block_rows: u32,  // rows of the block (of the binding `table`)
  first: u32,       // 1 when this dispatch writes the out-of-range indices' zeros
}

@group(0) @binding(0) var<storage, read> table: array<vec4f>;
@group(0) @binding(1) var<storage, read> index: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const WG: u32 = 256u;
const PER: u32 = 4u;

// Four output values and which of them this dispatch writes.
struct Part {
  value: vec4f,
  owned: vec4<bool>,
}

// Whether this dispatch writes the output row of table row `row` (an index as u32). A negative index
// reinterpreted as u32 is at least 2^31 > rows, and a row below row0 wraps past block_rows, so one
// comparison rejects each.
fn owns(row: u32) -> bool {
  if (row < params.v) {
    return row - params.row0 < params.block_rows;
  }
  return params.first != 0u;
}

// Output element e: its value (0 out of range) and whether it is this dispatch's.
fn element(e: u32) -> Part {
  let n = e / params.d;
  let row = bitcast<u32>(index[n]);
  var value = 0.0;
  if (row < params.v && owns(row)) {
    let i = (row - params.row0) * params.d + (e - n * params.d);
    value = table[i >> 2u][i & 3u];
  }
  return Part(vec4f(value), vec4<bool>(owns(row)));
}

// Output vec4 q: with cols % 4 == 0, four neighbouring columns of one row.
fn quad(q: u32) -> Part {
  if ((params.d & 3u) == 0u) {
    let e = 4u * q;
    let n = e / params.d;
    let row = bitcast<u32>(index[n]);
    var value = vec4f(0.0);
    if (row < params.v && owns(row)) {
      value = table[((row - params.row0) * params.d + (e - n * params.d)) >> 2u];
    }
    return Part(value, vec4<bool>(owns(row)));
  }
  let x = element(4u * q);
  let y = element(4u * q + 1u);
  let z = element(4u * q + 2u);
  let w = element(4u * q + 3u);
  return Part(vec4f(x.value.x, y.value.x, z.value.x, w.value.x), vec4<bool>(x.owned.x, y.owned.x, z.owned.x, w.owned.x));
}

// Stores the owned elements of output vec4 q: whole when all four are owned.
fn put(q: u32, part: Part) {
  if (all(part.owned)) {
    out[q] = part.value;
    return;
  }
  for (var c = 0u; c < 4u; c++) {
    if (part.owned[c]) {
      out[q][c] = part.value[c];
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
  let quads = params.total / 4u;
  // The grid-stride walk of harness/wgsl/quad_blocks.wgsl, with conditional stores.
  let span = WG * PER;
  for (var block = first * span; block < quads; block += groups.x * groups.y * span) {
    let i = block + lid;
    if (block + span <= quads) {
      let p0 = quad(i);
      let p1 = quad(i + WG);
      let p2 = quad(i + 2u * WG);
      let p3 = quad(i + 3u * WG);
      put(i, p0);
      put(i + WG, p1);
      put(i + 2u * WG, p2);
      put(i + 3u * WG, p3);
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          put(j, quad(j));
        }
      }
    }
  }
  let rest = params.total % 4u;
  if (rest != 0u && first == 0u && lid == 0u) {
    for (var j = 0u; j < rest; j++) {
      let part = element(4u * quads + j);
      if (part.owned.x) {
        out[quads][j] = part.value.x;
      }
    }
  }
}
