// gather/q4g128: out[n, d] = dequant(table)[index[n], d], or 0 when index[n] is outside [0, rows): gather's
// kernel for a table held in the q4g128 wire format (matvec's packQ4: eight two's-complement codes a word, least significant nibble first, a scale per group of 128 columns); each element decoded as the code (sign-extended by shifts) times its
// scale. One output element per invocation; the workgroup grid may be folded into y when it exceeds
// 65,535.
//
// Row blocks as gather/kernel: one dispatch per block, bound to rows [row0, row0 + block_rows) of the
// table (and of its scales), writes the output rows whose index falls in its block; the dispatch with
// `first` set also writes the zeros of the indices outside [0, rows).
struct Params {
  total: u32,       // indexLength * cols, output elements
  d: u32,           // cols, columns
  v: u32,           // rows, table rows (< 2^31)
  row0: u32,        // the block's first row
  block_rows: u32,  // rows of the block (of the bindings `table` and `scales`)
  first: u32,       // 1 when this dispatch writes the out-of-range indices' zeros
  words: u32,       // u32 words of a table row: ceil(cols / 8)
  groups: u32,      // scales of a row: ceil(cols / 128)
}

@group(0) @binding(0) var<storage, read> table: array<u32>;
@group(0) @binding(1) var<storage, read> scales: array<f32>;
@group(0) @binding(2) var<storage, read> index: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

fn element(local: u32, column: u32) -> f32 {
  return f32(i32(table[local * params.words + column / 8u] << (28u - 4u * (column % 8u))) >> 28u) * scales[local * params.groups + column / 128u];
}

// #include "gather_main.wgsl"
