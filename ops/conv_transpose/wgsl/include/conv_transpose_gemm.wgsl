// The phase-split implicit GEMM of conv_transpose1d. Output position t = s * stride - padding +
// k * dilation: only the taps k with k * dilation = t + padding (mod stride) reach t, so the outputs
// split into `stride` phases (t % stride = phase), and phase r's outputs, t = r + stride * j, are a
// plain correlation over j: out = bias + sum over ci and the phase's taps of
// x[ci, j + shift_k] * weight[ci, co, k], shift_k = (r + padding - k * dilation) / stride (exact).
// Per (group, phase) that is a GEMM, weight^T [cout_g x (cin_g * taps)] times the gathered input
// [(cin_g * taps) x (N * J)], J = ceil(Lout / stride) columns per sample (a phase's last column may
// fall past Lout); no product is spent on a tap that misses (a scatter over every tap would waste
// (stride - 1) / stride of them).
//
// The phase's taps are walked directly: the first one is found once per workgroup (first_tap), the
// next is tap_step = stride / gcd(stride, dilation) taps further and reads the input shift_step =
// dilation / gcd(stride, dilation) positions earlier (both from mod.ts). An earlier version visited
// every tap and skipped those of other phases with a modulo and a signed division per tap; at
// K = 16, stride 8 that was 14 skipped taps per block of 2 and cost a third of the time (0.600 ms
// against 0.397 on the H200, harness/baselines/nvidia-h200-log/32-convt-ab.txt).
//
// The tile, the k-steps and the staging follow ops/conv's implicit GEMM (wgsl/include/conv_gemm.wgsl
// there): TILE_M output channels x TILE_N columns per workgroup, 8 x 8 outputs per invocation, K
// walked as blocks of STEP = 8 input channels for each of the phase's taps. The including kernel
// declares TILE_M, TILE_N, STEP, LANES_*, HALF_* and A_PER as conv's do.

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

// The sum at output (n, channel, t) as torch forms it, term by term over the taps that land on t from
// inside the input. The GEMM also multiplies the taps that land on t from outside the input (their x
// staged as 0), which adds nothing to a finite sum but makes it NaN (0 * inf) when such a tap is
// infinite or NaN; so a sum that comes out NaN (tested from its bits at the store, outside the
// k-steps) is formed again here, which gives NaN again only where torch's sum is NaN.
fn sum_of_taps(n: u32, g: u32, channel: u32, t: u32) -> f32 {
  var sum = 0.0;
  for (var ci = 0u; ci < params.cin_g; ci++) {
    let cin = g * params.cin_g + ci;
    for (var k = 0u; k < params.k; k++) {
      let u = i32(t + params.padding) - i32(k * params.dilation); // s * stride
      if (u >= 0 && u % i32(params.stride) == 0 && u / i32(params.stride) < i32(params.l_in)) {
        let s = u32(u) / params.stride;
        sum += x[(n * params.cin + cin) * params.l_in + s] * weight[(cin * params.cout_g + channel - g * params.cout_g) * params.k + k];
      }
    }
  }
  return sum;
}

// Writes output channel co of group g at columns col .. col + 3 of this phase, plus the bias;
// columns past the end, positions past Lout and channels past the group are skipped. A phase's
// positions are `stride` apart, so the four are stored one by one; the sample and position of the
// first are divided out once and the others stepped from it. A NaN sum is formed again by
// sum_of_taps.
fn store_quad(g: u32, co: u32, col: u32, v: vec4f) {
  if (co >= params.cout_g) {
    return;
  }
  let channel = g * params.cout_g + co;
  let b = select(0.0, bias[min(channel, arrayLength(&bias) - 1u)], params.has_bias != 0u);
  var n = col / params.j_count;
  var j = col - n * params.j_count;
  for (var e = 0u; e < 4u; e++) {
    let t = phase + params.stride * j;
    if (col + e < params.cols && t < params.l_out) {
      var sum = v[e];
      if ((bitcast<u32>(sum) & 0x7fffffffu) > 0x7f800000u) {
        sum = sum_of_taps(n, g, channel, t);
      }
      out[(n * params.cout + channel) * params.l_out + t] = sum + b;
    }
    j += 1u;
    if (j == params.j_count) {
      j = 0u;
      n += 1u;
    }
  }
}

// The first tap of phase r: the smallest k with k * dilation = r + padding (mod stride), or K when
// no tap reaches the phase (possible when gcd(stride, dilation) > 1, or K < stride). The residues of
// k * dilation repeat every tap_step taps, so tap_step of them settle it.
fn first_tap(r: u32) -> u32 {
  let want = (r + params.padding) % params.stride;
  for (var k = 0u; k < min(params.k, params.tap_step); k++) {
    if ((k * params.dilation) % params.stride == want) {
      return k;
    }
  }
  return params.k;
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
  // A local copy decides the loop's bounds: a private variable's reads do not count as uniform.
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

  // The phase's first tap and the input position it reads for this column (uniform tap bounds: the
  // barriers of the loop below stay in uniform control flow).
  let k_first = first_tap(r);
  let s_first = i32(j) + (i32(r + params.padding) - i32(k_first * params.dilation)) / i32(params.stride);

// #include "gemm_acc8x8.wgsl"

  for (var ci0 = 0u; ci0 < params.cin_g; ci0 += STEP) {
    var s = s_first;
    for (var k = k_first; k < params.k; k += params.tap_step) {
      let inside = col_ok && s >= 0 && s < i32(params.l_in);
      let at = select(0u, x_base + u32(s), inside);
      s -= i32(params.shift_step);
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
