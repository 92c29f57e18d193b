// quantize/packed_q4: the q4 group-128 quantization of ops/matvec's quantizeQ4G128, written in the
// q4 wire format the quantized matvec and matmul read (packQ4): for each row and each 128 columns
// (the last group may be shorter), scale = absmax / 7 and code = round(x * 7 / absmax), ties toward
// +Infinity, in [-7, 7]; eight codes per u32, least significant nibble first, two's complement, each
// row padded with zero codes to a whole word. x holds `rows` rows; they are written as rows
// [row_offset, row_offset + rows) of packed ([.., words]) and scales ([.., groups]), so a matrix too
// large to bind as f32 at once is quantized into one buffer a piece at a time.
//
// A group is 16 words. A workgroup takes 16 groups, in row-major order over (row, group) pairs, so
// short rows and a row's short last group share a workgroup: each invocation loads the eight
// columns of one word into registers (consecutive invocations read consecutive 32-byte runs), the
// group's 16 invocations reduce their largest magnitudes through workgroup memory, and each then
// writes its word from registers; the group's first writes the scale. Codes and scales are decided
// exactly, in integer arithmetic on the f32 bit patterns (exact_code.wgsl, exact_scale.wgsl),
// so every device writes the converter's bytes. Workgroups beyond 65,535 fold into y:
// block = id.x + id.y * num_workgroups.x.
struct Params {
  rows: u32,
  cols: u32,
  row_offset: u32,
  words: u32,   // ceil(cols / 8): words per packed row
  groups: u32,  // ceil(cols / 128): scales per row
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> packed: array<u32>;
@group(0) @binding(2) var<storage, read_write> scales: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const WORKGROUP = 256u;
const LANES = 16u;  // invocations (words) per group of 128 columns
const GROUPS_PER_WORKGROUP = WORKGROUP / LANES;  // GROUPS_PER_WORKGROUP in mod.ts
const LEVELS = 7u;  // the largest code, for exact_code.wgsl

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
  let lane = lid % LANES;
  let item = (wid.x + wid.y * grid.x) * GROUPS_PER_WORKGROUP + lid / LANES;  // a (row, group) pair
  let row = item / params.groups;
  let word = (item % params.groups) * LANES + lane;  // within the row
  let cols = params.cols;
  // An invocation past the last row or the row's last word holds zeros and writes nothing.
  let writes = row < params.rows && word < params.words;
  var bits: array<u32, 8>;
  var largest = 0u;
  if (writes) {
    let first = row * cols + 8u * word;
    let count = min(8u, cols - 8u * word);
    for (var j = 0u; j < 8u; j++) {
      bits[j] = select(0u, bitcast<u32>(x[first + min(j, count - 1u)]), j < count);
      largest = max(largest, bits[j] & 0x7fffffffu);
    }
  }
  // The group's 16 entries, reduced in place: for non-negative floats the order of their bit
  // patterns as u32 is the order of their values.
  maxima[lid] = largest;
  workgroupBarrier();
  for (var stride = LANES / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      maxima[lid] = max(maxima[lid], maxima[lid + stride]);
    }
    workgroupBarrier();
  }
  let absmax_bits = maxima[lid - lane];
  if (!writes) {
    return;
  }
  let out_row = params.row_offset + row;
  if (lane == 0u) {
    scales[out_row * params.groups + word / LANES] = exact_scale(absmax_bits);
  }
  var packed_word = 0u;
  for (var j = 0u; j < 8u; j++) {
    // A padding column holds bits 0, whose code is 0.
    packed_word |= (bitcast<u32>(exact_code(bits[j], absmax_bits)) & 0xfu) << (4u * j);
  }
  packed[out_row * params.words + word] = packed_word;
}
