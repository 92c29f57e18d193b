// The uniform of group_norm's three kernels and their block shape. x is [N, C, L]; each (sample,
// group) of C / G consecutive channels is a contiguous row of d = (C / G) * L elements. A row is
// `aligned` when d % 4 == 0 and L % 4 == 0: it starts on a quad and each of its quads lies in one
// channel, so it is read and written as vec4s; otherwise (`ragged`) element by element through the
// quads' components. On the split path, stats cuts each row into `chunks` pieces of `span` quads
// (aligned) or elements (ragged), the last one shorter, and apply into `blocks` blocks of WG * PER
// (the fused path does both in one dispatch).
struct Params {
  rows: u32,        // N * G
  d: u32,           // elements per row: (C / G) * L
  l: u32,           // elements per channel
  per_group: u32,   // channels per group, C / G
  groups: u32,      // G
  eps: f32,
  has_weight: u32,
  has_bias: u32,
  chunks: u32,      // stats: pieces per row, each one summary (1 on the rows path)
  span: u32,        // stats: quads or elements per piece
  blocks: u32,      // apply: blocks of WG * PER quads or elements per row
  activation: u32,  // 0 none, 1 silu after the affine
  polls: u32,       // fused: polls of a piece's words before computing the piece itself
}

const WG = 256u;
const PER = 4u; // quads (aligned) or scalars (ragged) per invocation per block
