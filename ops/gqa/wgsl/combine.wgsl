// gqa/combine: the second pass of flash-decoding. For each output row (b, h, i), merges the splits that
// gqa/decode wrote: with M the largest split max, out = sum_s exp(m_s - M) o_s / sum_s exp(m_s - M) l_s,
// where o_s is split s's unnormalised output, m_s its max and l_s its sum. A split with no live key has
// l_s = 0 and o_s = 0 and adds nothing; a row with no live key anywhere (every l_s = 0) is zeros.
// part_out [rows, splits, Dv], part_stats [rows, splits, 2] (m, l), out [rows, Dv], Dv % 4 == 0 and
// Dv <= 128: one workgroup per row (rows past 65,535 fold into y), one invocation per quad of Dv.

struct Params {
  rows: u32,    // B * H * L
  splits: u32,
  dvq: u32,     // Dv / 4
}

@group(0) @binding(0) var<storage, read> part_out: array<vec4f>;
@group(0) @binding(1) var<storage, read> part_stats: array<vec2f>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(3) var<uniform> params: Params;

const LOWEST = -0x1.fffffep+127f;

@compute @workgroup_size(32)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) quad: u32,
) {
  let row = wid.x + wid.y * grid.x;
  if (row >= params.rows || quad >= params.dvq) {
    return;
  }
  let stats = row * params.splits;
  var top = LOWEST;
  for (var s = 0u; s < params.splits; s++) {
    let st = part_stats[stats + s];
    top = select(top, max(top, st.x), st.y > 0.0);
  }
  var acc = vec4f(0.0);
  var total = 0.0;
  for (var s = 0u; s < params.splits; s++) {
    let st = part_stats[stats + s];
    let w = select(0.0, exp(st.x - top), st.y > 0.0);
    acc += w * part_out[(stats + s) * params.dvq + quad];
    total += w * st.y;
  }
  out[row * params.dvq + quad] = select(acc / total, vec4f(0.0), total == 0.0);
}
