// quantize/packed: quantize/kernel's per-row int8 quantization, written in the q8 wire format the
// quantized matvec and matmul read (ops/matvec's packQ8): four codes per u32, least significant
// byte first, two's complement, each row padded with zero codes to a whole word. x holds `rows`
// rows; they are written as rows [row_offset, row_offset + rows) of packed and scales, so a matrix
// too large to bind as f32 at once is quantized into one buffer a piece at a time.
// One workgroup per row, as quantize/kernel: the row's absmax reduced through workgroup memory,
// then each invocation packs whole words. Codes and scales are decided exactly, in integer
// arithmetic on the f32 bit patterns (exact_code.wgsl, exact_scale.wgsl), so every device
// writes the converter's bytes. Rows beyond 65,535 fold into y: row = id.x + id.y * num_workgroups.x.
struct Params {
  rows: u32,
  cols: u32,
  row_offset: u32,
  words: u32,  // ceil(cols / 4): words per packed row
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> packed: array<u32>;
@group(0) @binding(2) var<storage, read_write> scales: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const WORKGROUP = 256u;
const LEVELS = 127u;  // the largest code, for exact_code.wgsl

var<workgroup> maxima: array<u32, WORKGROUP>;

// #include "magnitude.wgsl"

// #include "exact_scale.wgsl"

// #include "exact_code.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * grid.x;
  if (row >= params.rows) {
    return;
  }
  let cols = params.cols;
  let base = row * cols;

// #include "row_absmax.wgsl"

  let out_row = params.row_offset + row;
  if (lid == 0u) {
    scales[out_row] = exact_scale(absmax_bits);
  }
  for (var w = lid; w < params.words; w += WORKGROUP) {
    var word = 0u;
    for (var j = 0u; j < 4u; j++) {
      let c = 4u * w + j;
      if (c < cols) {
        word |= (bitcast<u32>(exact_code(bitcast<u32>(x[base + c]), absmax_bits)) & 0xffu) << (8u * j);
      }
    }
    packed[out_row * params.words + w] = word;
  }
}
