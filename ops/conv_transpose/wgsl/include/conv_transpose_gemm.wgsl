// The phase-split implicit GEMM of conv_transpose1d. Output position t = s * stride - padding +
// k * dilation: only the taps k with k * dilation = t + padding (mod stride) reach t, so the outputs
// split into `stride` phases (t % stride = phase), and phase r's outputs, t = r + stride * j, are a
// plain correlation over j: out = bias + sum over ci and the phase's taps of
// x[ci, j + shift_k] * weight[ci, co, k], shift_k = (r + padding - k * dilation) / stride (exact).
// Per (group, phase) that is a GEMM, weight^T [cout_g x (cin_g * taps)] times the gathered input
// [(cin_g * taps) x (N * J)], J = ceil(Lout / stride) columns per sample (a phase's last column may
// fall past Lout); no product is spent on a tap that misses
// (a scatter over every tap would waste (stride - 1) / stride of them). The tile, the k-steps and
// the staging follow ops/conv's implicit GEMM (wgsl/include/conv_gemm.wgsl there): TILE_M output
// channels x TILE_N columns per workgroup, 8 x 8 outputs per invocation, K walked as blocks of STEP
// = 8 input channels for each of the phase's taps. The including kernel declares TILE_M, TILE_N,
// STEP, LANES_*, HALF_* and A_PER as conv's do.

var<workgroup> a_t: array<vec4f, STEP * LANES_M>;
var<workgroup> b_s: array<vec4f, STEP * LANES_N>;

const B_ROW_STEP = 256u / TILE_N;
const A_ROW_STEP = 256u / TILE_M;
const B_PER = STEP * TILE_N / 256u; // input values staged per invocation per block: 4 or 8

// This workgroup's phase (t % stride of its outputs), set once at the start of main.
var<private> phase: u32;

// Input channel ci (of the group) at position `at` of channel 0, or 0 outside the input.
fn load_x(at: u32, ci: u32, inside: bool) -> f32 {
  if (inside && ci < params.cin_g) {
    return x[at + ci * params.l_in];
  }
  return 0.0;
}

// Writes output channel co of group g at columns col .. col + 3 of this phase, plus the bias;
// columns past the end, positions past Lout and channels past the group are skipped. A phase's positions are `stride` apart, so the four are stored one by one.
fn store_quad(g: u32, co: u32, col: u32, v: vec4f) {
  if (co >= params.cout_g) {
    return;
  }
  let channel = g * params.cout_g + co;
  let shifted = v + select(0.0, bias[min(channel, arrayLength(&bias) - 1u)], params.has_bias != 0u);
  for (var j = 0u; j < 4u; j++) {
    let c = col + j;
    let t = phase + params.stride * (c % params.j_count);
    if (c < params.cols && t < params.l_out) {
      out[(c / params.j_count * params.cout + channel) * params.l_out + t] = shifted[j];
    }
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  // Tiles beyond 65,535 fold into y; output-channel tiles vary fastest, then column tiles, phases,
  // groups.
  let tile = wid.x + wid.y * grid.x;
  let per_phase = params.tiles_m * params.tiles_n;
  let per_group = per_phase * params.stride;
  if (tile >= per_group * params.groups) {
    return;
  }
  let g = tile / per_group;
  // A local copy decides the loop's branches: a private variable's reads do not count as uniform.
  let r = (tile % per_group) / per_phase;
  phase = r;
  let row0 = (tile % params.tiles_m) * TILE_M;
  let col0 = ((tile % per_phase) / params.tiles_m) * TILE_N;
  let tx = lid % HALF_N;
  let ty = lid / HALF_N;

  // Staging of the input: column b_col of the tile (sample, j), rows b_row + i * B_ROW_STEP.
  let b_col = lid % TILE_N;
  let b_row = lid / TILE_N;
  let col = col0 + b_col;
  let col_ok = col < params.cols;
  let j = min(col, params.cols - 1u) % params.j_count;
  let x_base = ((min(col, params.cols - 1u) / params.j_count) * params.cin + g * params.cin_g) * params.l_in;

  // And of the weight [Cin, Cout / groups, K]: output channel a_row of the tile, rows a_k + i * A_ROW_STEP.
  let a_row = lid % TILE_M;
  let a_k = lid / TILE_M;
  let a_ok = row0 + a_row < params.cout_g;
  let a_co = min(row0 + a_row, params.cout_g - 1u);

// #include "gemm_acc8x8.wgsl"

  for (var ci0 = 0u; ci0 < params.cin_g; ci0 += STEP) {
    for (var k = 0u; k < params.k; k++) {
      // Only the taps of this phase: k * dilation = phase + padding (mod stride). The same for the
      // whole workgroup, so the barriers below stay in uniform control flow.
      let reach = k * params.dilation;
      if (reach % params.stride != (r + params.padding) % params.stride) {
        continue;
      }
      let s = i32(j) + (i32(r + params.padding) - i32(reach)) / i32(params.stride);
      let inside = col_ok && s >= 0 && s < i32(params.l_in);
      let at = select(0u, x_base + u32(s), inside);
      let ci = ci0 + b_row;
      let v0 = load_x(at, ci, inside);
      let v1 = load_x(at, ci + B_ROW_STEP, inside);
      let v2 = load_x(at, ci + 2u * B_ROW_STEP, inside);
      let v3 = load_x(at, ci + 3u * B_ROW_STEP, inside);
      for (var i = 0u; i < A_PER; i++) {
        let kk = a_k + i * A_ROW_STEP;
        var w = 0.0;
        if (a_ok && ci0 + kk < params.cin_g) {
          w = weight[((g * params.cin_g + ci0 + kk) * params.cout_g + a_co) * params.k + k];
        }
        a_t[kk * LANES_M + a_row / 4u][a_row % 4u] = w;
      }
      // The input values into b_s, then the block's k-steps between two barriers.
// #include "gemm8_block.wgsl"
    }
  }

// #include "gemm8_store_acc.wgsl"
}
