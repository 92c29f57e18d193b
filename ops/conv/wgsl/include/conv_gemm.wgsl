// The implicit GEMM of conv1d / conv2d / conv3d (1-D and 2-D as 3-D with unit outer axes): per group
// g, out[g] = weight[g] (cout_g x K) @ im2col(x)[g] (K x columns), columns = n * out_sp + position,
// K walked as (block of STEP input channels) x (kernel position), never materialised. Everything
// but the tile's constants, which the including kernel declares: TILE_M (output channels) x TILE_N
// (columns) per workgroup of 256 invocations, each owning 8 x 8 outputs; LANES_* = TILE_* / 4,
// HALF_* = LANES_* / 2; A_PER = STEP * TILE_M / 256 weight values and B_PER = STEP * TILE_N / 256
// (4 or 8) input values staged per invocation per block.

// a_t[k * LANES_M + i] holds weight rows row0 + 4i .. 4i + 3 at this block's k (transposed);
// b_s[k * LANES_N + j] holds columns col0 + 4j .. 4j + 3 of the im2col block's row k.
var<workgroup> a_t: array<vec4f, STEP * LANES_M>;
var<workgroup> b_s: array<vec4f, STEP * LANES_N>;

const B_ROW_STEP = 256u / TILE_N; // rows between an invocation's input values in the block
const A_ROW_STEP = 256u / TILE_M; // rows between an invocation's weight values in the block
const B_PER = STEP * TILE_N / 256u; // input values staged per invocation per block: 4 or 8

// Input channel ci (of the group) at element `at` of channel 0, or 0 outside the input.
fn load_x(at: u32, ci: u32, inside: bool) -> f32 {
  if (inside && ci < params.cin_g) {
    return x[at + ci * params.in_sp];
  }
  return 0.0;
}

// Writes output channel `co` of group g (co within the group) at columns col .. col + 3, plus the
// bias; columns past the end and channels past the group are skipped.
fn store_quad(g: u32, co: u32, col: u32, v: vec4f) {
  if (co >= params.cout_g || col >= params.cols) {
    return;
  }
  let channel = g * params.cout_g + co;
  let shifted = v + select(0.0, bias[min(channel, arrayLength(&bias) - 1u)], params.has_bias != 0u);
  if (params.out_sp % 4u == 0u) {
    // col % 4 == 0 and out_sp % 4 == 0: the four columns are one sample's, on one aligned quad.
    let n = col / params.out_sp;
    out[((n * params.cout + channel) * params.out_sp + col % params.out_sp) / 4u] = shifted;
    return;
  }
  for (var j = 0u; j < 4u; j++) {
    let c = col + j;
    if (c < params.cols) {
      let e = (c / params.out_sp * params.cout + channel) * params.out_sp + c % params.out_sp;
      out[e / 4u][e % 4u] = shifted[j];
    }
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  // Tiles beyond 65,535 fold into y. Output-channel tiles vary fastest, so neighbouring workgroups
  // read the same input columns.
  let tile = wid.x + wid.y * grid.x;
  let per_group = params.tiles_m * params.tiles_n;
  if (tile >= per_group * params.groups) {
    return;
  }
  let g = tile / per_group;
  let row0 = (tile % params.tiles_m) * TILE_M;
  let col0 = ((tile % per_group) / params.tiles_m) * TILE_N;
  let tx = lid % HALF_N;
  let ty = lid / HALF_N;

  // This invocation's staging of the input: column b_col of the tile, rows b_row + i * B_ROW_STEP.
  let b_col = lid % TILE_N;
  let b_row = lid / TILE_N;
  let col = col0 + b_col;
  let col_ok = col < params.cols;
  let position = min(col, params.cols - 1u) % params.out_sp;
  let sample = min(col, params.cols - 1u) / params.out_sp;
  let od = position / params.out_hw;
  let oh = (position % params.out_hw) / params.out_w;
  let ow = position % params.out_w;
  let x_base = (sample * params.cin + g * params.cin_g) * params.in_sp;
  let d0 = i32(od * params.stride_d) - i32(params.pad_d);
  let h0 = i32(oh * params.stride_h) - i32(params.pad_h);
  let w0 = i32(ow * params.stride_w) - i32(params.pad_w);

  // And of the weight: row a_row of the tile, block rows a_k + i * A_ROW_STEP.
  let a_row = lid % TILE_M;
  let a_k = lid / TILE_M;
  let a_ok = row0 + a_row < params.cout_g;
  let w_base = ((g * params.cout_g + min(row0 + a_row, params.cout_g - 1u)) * params.cin_g) * params.kvol;

// #include "gemm_acc8x8.wgsl"

  for (var ci0 = 0u; ci0 < params.cin_g; ci0 += STEP) {
    var kd = 0u;
    var kh = 0u;
    var kw = 0u;
    for (var kpos = 0u; kpos < params.kvol; kpos++) {
      let id = d0 + i32(kd * params.dil_d);
      let ih = h0 + i32(kh * params.dil_h);
      let iw = w0 + i32(kw * params.dil_w);
      let inside = col_ok && id >= 0 && id < i32(params.in_d) && ih >= 0 && ih < i32(params.in_h) && iw >= 0 &&
        iw < i32(params.in_w);
      let at = select(0u, x_base + u32(id) * params.in_hw + u32(ih) * params.in_w + u32(iw), inside);
      let ci = ci0 + b_row;
      let v0 = load_x(at, ci, inside);
      let v1 = load_x(at, ci + B_ROW_STEP, inside);
      let v2 = load_x(at, ci + 2u * B_ROW_STEP, inside);
      let v3 = load_x(at, ci + 3u * B_ROW_STEP, inside);
      for (var i = 0u; i < A_PER; i++) {
        let k = a_k + i * A_ROW_STEP;
        var w = 0.0;
        if (a_ok && ci0 + k < params.cin_g) {
          w = weight[w_base + (ci0 + k) * params.kvol + kpos];
        }
        a_t[k * LANES_M + a_row / 4u][a_row % 4u] = w;
      }
      // The input values into b_s, then the block's k-steps between two barriers.
// #include "gemm8_block.wgsl"
      kw += 1u;
      if (kw == params.k_w) {
        kw = 0u;
        kh += 1u;
        if (kh == params.k_h) {
          kh = 0u;
          kd += 1u;
        }
      }
    }
  }

// #include "gemm8_store_acc.wgsl"
}
