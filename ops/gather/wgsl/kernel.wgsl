// gather/kernel: out[n, d] = table[index[n], d], or 0 when index[n] is outside [0, rows).
// One output element per invocation; the workgroup grid may be folded into y when it exceeds 65,535.
//
// The table may be held as row blocks, one binding each (a table past maxStorageBufferBindingSize):
// one dispatch per block, bound to rows [row0, row0 + block_rows) of the table, writes the output rows
// whose index falls in its block and leaves the others to their block's dispatch; the dispatch with
// `first` set also writes the zeros of the indices outside [0, rows). A table in one binding is one
// block (row0 0, block_rows = rows, first 1).
struct Params {
  total: u32,       // indexLength * cols, output elements
  d: u32,           // cols, columns
  v: u32,           // rows, table rows (< 2^31)
  row0: u32,        // the block's first row
  block_rows: u32,  // rows of the block (of the binding `table`)
  first: u32,       // 1 when this dispatch writes the out-of-range indices' zeros
}

@group(0) @binding(0) var<storage, read> table: array<f32>;
@group(0) @binding(1) var<storage, read> index: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

fn element(local: u32, column: u32) -> f32 {
  return table[local * params.d + column];
}

// #include "gather_main.wgsl"
