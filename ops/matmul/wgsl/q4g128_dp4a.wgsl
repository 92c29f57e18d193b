// matmul/q4g128_dp4a: c = dequant(a) @ dequant(weight)^T on integer dot products. a [M, K] is int8
// codes four to a u32 (least significant byte first, two's complement), [M, ceil(K/4)] words, with
// one f32 scale per row, a_scales[m] (ops/quantize's `packed` writes it from f32 activations); the
// weight [N, K] is ops/matvec's q4 group-128 format: [N, ceil(K/8)] u32, eight two's-complement
// nibbles per word, least significant first, and scales[n, g] ([N, ceil(K/128)]) for columns
// 128g .. 128g + 127 of row n.
// c[m, n] = (sum_g f32(sum_{k in g} code_a[m, k] code_w[n, k]) * scales[n, g]) * a_scales[m], the
// groups summed in f32 in order of g, c [M, N] f32.
//
// q8row_dp4a's tile and walk (q8row_dp4a.wgsl says the design), with a step of 128 codes that is
// one group: each q4 word is widened while it is staged into two words of four int8 codes
// (pack4xI8 of the sign-extended nibbles), the group's sums are taken in i32 by dot4I8Packed, exact,
// and at the end of the step scaled by the group's scales into f32 sums; the activation scale is
// applied once per output at the end. Needs WGSL's packed_4x8_integer_dot_product (mod.ts refuses
// the plan where it is missing).

// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> a_scales: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<u32>;
@group(0) @binding(3) var<storage, read> scales: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;
@group(0) @binding(5) var<uniform> params: Params;

const GROUP = 128u; // columns per scale: one step of the walk (4 * STEP)

// #include "dp4a_decls.wgsl"

// #include "store_c_scalar.wgsl"

// The q4 word holding codes 8q .. 8q + 7 of weight row n, or 0 outside the weight.
fn load_weight(n: u32, q: u32) -> u32 {
  let words = (params.k + 7u) / 8u;
  if (n < params.n && q < words) {
    return weight[n * words + q];
  }
  return 0u;
}

// Scale g of weight row n, or 0 outside the weight.
fn load_scale(n: u32, g: u32) -> f32 {
  let groups = (params.k + GROUP - 1u) / GROUP;
  if (n < params.n && g < groups) {
    return scales[n * groups + g];
  }
  return 0.0;
}

// Row m's activation scale, or 0 outside a.
fn load_a_scale(m: u32) -> f32 {
  if (m < params.m) {
    return a_scales[m];
  }
  return 0.0;
}

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup.wgsl"

  var sum0 = vec4f(0.0);
  var sum1 = vec4f(0.0);
  var sum2 = vec4f(0.0);
  var sum3 = vec4f(0.0);
  var sum4 = vec4f(0.0);
  var sum5 = vec4f(0.0);
  var sum6 = vec4f(0.0);
  var sum7 = vec4f(0.0);
  let col = col0 + tx * 4u;
  for (var k0w = 0u; k0w < words; k0w += STEP) {
// #include "dp4a_stage_a.wgsl"
    // Eight q4 words of the weight row, each widened to two words of four int8 codes.
    for (var j = 0u; j < 16u; j += 2u) {
      let q4 = vec4i(bitcast<i32>(load_weight(col0 + stage_row, (k0w + stage_w + j) / 2u)));
      let slot = (stage_w + j) * LANES + stage_row / 4u;
      w_t[slot][stage_row % 4u] = pack4xI8((q4 << vec4u(28u, 24u, 20u, 16u)) >> vec4u(28u));
      w_t[slot + LANES][stage_row % 4u] = pack4xI8((q4 << vec4u(12u, 8u, 4u, 0u)) >> vec4u(28u));
    }
    var isum0 = vec4i(0);
    var isum1 = vec4i(0);
    var isum2 = vec4i(0);
    var isum3 = vec4i(0);
    var isum4 = vec4i(0);
    var isum5 = vec4i(0);
    var isum6 = vec4i(0);
    var isum7 = vec4i(0);
// #include "dp4a_multiply.wgsl"
    let g = k0w / STEP;
    let group_scales = vec4f(load_scale(col, g), load_scale(col + 1u, g), load_scale(col + 2u, g), load_scale(col + 3u, g));
    sum0 += vec4f(isum0) * group_scales;
    sum1 += vec4f(isum1) * group_scales;
    sum2 += vec4f(isum2) * group_scales;
    sum3 += vec4f(isum3) * group_scales;
    sum4 += vec4f(isum4) * group_scales;
    sum5 += vec4f(isum5) * group_scales;
    sum6 += vec4f(isum6) * group_scales;
    sum7 += vec4f(isum7) * group_scales;
  }

  let top = row0 + ty * 4u;
  let bottom = top + 32u;
  store_c(top, col, sum0 * load_a_scale(top));
  store_c(top + 1u, col, sum1 * load_a_scale(top + 1u));
  store_c(top + 2u, col, sum2 * load_a_scale(top + 2u));
  store_c(top + 3u, col, sum3 * load_a_scale(top + 3u));
  store_c(bottom, col, sum4 * load_a_scale(bottom));
  store_c(bottom + 1u, col, sum5 * load_a_scale(bottom + 1u));
  store_c(bottom + 2u, col, sum6 * load_a_scale(bottom + 2u));
  store_c(bottom + 3u, col, sum7 * load_a_scale(bottom + 3u));
}
