// The implicit GEMM of conv1d / conv2d / conv3d (1-D and 2-D as 3-D with unit outer axes): per group
// g, out[g] = weight[g] (cout_g x K) @ im2col(x)[g] (K x columns), columns = n * out_sp + position,
// K walked as (block of STEP input channels) x (kernel position), never materialised: one stage of
// workgroup memory, two barriers per block (conv_gemm_pipelined.wgsl is the two-stage form, with
// the same setup, functions and sums). Everything but the tile's constants, which the including
// kernel declares: TILE_M (output channels) x TILE_N (columns) per workgroup of 256 invocations,
// each owning 8 x 8 outputs; LANES_* = TILE_* / 4, HALF_* = LANES_* / 2; A_PER = STEP * TILE_M / 256
// weight values and B_PER = STEP * TILE_N / 256 (4 or 8) input values staged per invocation per
// block.

// a_t[k * LANES_M + i] holds weight rows row0 + 4i .. 4i + 3 at this block's k (transposed);
// b_s[k * LANES_N + j] holds columns col0 + 4j .. 4j + 3 of the im2col block's row k.
var<workgroup> a_t: array<vec4f, STEP * LANES_M>;
var<workgroup> b_s: array<vec4f, STEP * LANES_N>;

// #include "conv_io.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "conv_setup.wgsl"

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
