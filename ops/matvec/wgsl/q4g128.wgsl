// matvec/q4g128: y[n] = sum_g scales[n, g] * sum_{k in group g} code[n, k] * x[k] (W4A32, group 128).
// The weight is [N, ceil(K/8)] u32, eight two's-complement codes per word, least significant nibble
// first; scales is [N, ceil(K/128)]; x is [K].
// Same layout as matvec/kernel: four rows per workgroup, 64 invocations per row, split-K, partial
// sums reduced in workgroup memory. A word never straddles two groups (8 divides 128), so each
// invocation multiplies the dot product of a word (or of a vec4 of words) by that group's scale.
// When K % 32 == 0 a row is a whole number of vec4<u32> and each load brings 32 codes; otherwise
// one word at a time, and the last word of a row, whose high nibbles are padding, is read with the
// x lanes past K replaced by 0 (and x past its end not read) so that the padding never counts.
// More than 65,535 workgroups fold into y: group = id.x + id.y * num_workgroups.x, rows bound-checked.
struct Params {
  n: u32,  // rows, length of y
  k: u32,  // columns, length of x
}

@group(0) @binding(0) var<storage, read> weight: array<vec4u>;
@group(0) @binding(1) var<storage, read> scales: array<f32>;
@group(0) @binding(2) var<storage, read> x: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

const LANES = 64u;  // invocations per row
const ROWS = 4u;    // rows per workgroup
const GROUP = 128u; // columns per scale

var<workgroup> partial: array<f32, LANES * ROWS>;

// Codes 0-3 and 4-7 of a word: each nibble shifted to the top of an i32, then arithmetic-shifted
// back down, which sign-extends it.
fn low_codes(word: u32) -> vec4f {
  return vec4f((vec4i(bitcast<i32>(word)) << vec4u(28u, 24u, 20u, 16u)) >> vec4u(28u));
}

fn high_codes(word: u32) -> vec4f {
  return vec4f((vec4i(bitcast<i32>(word)) << vec4u(12u, 8u, 4u, 0u)) >> vec4u(28u));
}

// Columns 8j .. 8j + 7 of x, for a word j that lies wholly inside [0, K).
fn word_dot(word: u32, j: u32) -> f32 {
  return dot(low_codes(word), x[2u * j]) + dot(high_codes(word), x[2u * j + 1u]);
}

@compute @workgroup_size(64, 4)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
  let row = (wid.x + wid.y * groups.x) * ROWS + lid.y;
  let lane = lid.x;
  let k = params.k;
  let scale_base = row * ((k + GROUP - 1u) / GROUP);
  var acc = 0.0;
  if (row < params.n) {
    if (k % 32u == 0u) {
      let blocks = k / 32u;
      let base = row * blocks;
      for (var i = lane; i < blocks; i += LANES) {
        let q = weight[base + i];
        let j = 4u * i;
        let dot32 = word_dot(q.x, j) + word_dot(q.y, j + 1u) + word_dot(q.z, j + 2u) + word_dot(q.w, j + 3u);
        acc += scales[scale_base + i / 4u] * dot32;
      }
    } else {
      let words = (k + 7u) / 8u;
      let full = k / 8u;
      let base = row * words;
      for (var j = lane; j < full; j += LANES) {
        let e = base + j;
        acc += scales[scale_base + j / 16u] * word_dot(weight[e / 4u][e % 4u], j);
      }
      if (full < words && lane == full % LANES) {
        let e = base + full;
        let word = weight[e / 4u][e % 4u];
        let left = k % 8u;  // columns of the last word inside the row
        let lanes = vec4u(0u, 1u, 2u, 3u);
        var tail = dot(low_codes(word), select(vec4f(0.0), x[2u * full], lanes < vec4u(left)));
        if (left > 4u) {
          tail += dot(high_codes(word), select(vec4f(0.0), x[2u * full + 1u], lanes + 4u < vec4u(left)));
        }
        acc += scales[scale_base + full / 16u] * tail;
      }
    }
  }

  let slot = lid.y * LANES + lane;
  partial[slot] = acc;
  workgroupBarrier();
  for (var stride = LANES / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      partial[slot] += partial[slot + stride];
    }
    workgroupBarrier();
  }
  if (lane == 0u && row < params.n) {
    y[row] = partial[slot];
  }
}
