// activation/gated_pairs: SwiGLU of interleaved pairs into a column range,
// h[row, col0 + j] = silu(gu[row, 2j]) * gu[row, 2j + 1] for gu [rows, 2 * pairs] and h [rows, ffn]
// (its other columns untouched): a feed-forward whose gate and up projections are one matrix with
// their rows interleaved (gate j at row 2j, up j at 2j + 1), run a piece of its rows at a time.
// silu(g) = g / (1 + exp(-g)), as written: for g below about -88 exp overflows and the quotient is
// -0, where activation/kernel's overflow-free sigmoid gives a denormal or -0 (both round to 0 * up).
// One invocation per pair, 256 pairs by one row a workgroup (the grid's y is the rows).
struct P { rows: u32, pairs: u32, ffn: u32, col0: u32 }
@group(0) @binding(0) var<storage, read> gu: array<f32>;
@group(0) @binding(1) var<storage, read_write> h: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let j = g.x;
  let row = g.y;
  if (j >= p.pairs || row >= p.rows) { return; }
  let gate = gu[row * 2u * p.pairs + 2u * j];
  h[row * p.ffn + p.col0 + j] = gate / (1.0 + exp(-gate)) * gu[row * 2u * p.pairs + 2u * j + 1u];
}