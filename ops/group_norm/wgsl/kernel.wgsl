// group_norm/kernel: x is [N, C, L]; each (sample, group) of C / G consecutive channels is a
// contiguous row of d = (C / G) * L elements, normalised with one mean and one (biased) variance:
// out = (x - mean) * inverseSqrt(var + eps) * weight[c] + bias[c], c the element's channel.
//
// One workgroup per row (rows beyond 65,535 fold into y): the path for many rows (mod.ts chooses).
// Two passes over the row:
// 1. Statistics (summary.wgsl): Chan et al.'s merges of per-chunk summaries, stable at 100 +- 1.
// 2. Normalisation: the row is read again, last block first (the blocks read last in pass 1 are the
//    likeliest still in L2), and written with the channel's weight and bias.
// aligned rows are read and written as vec4s, PER quads per invocation per block, all loads of a
// block before the first is used; ragged rows take the same walk PER scalars at a time.
// #include "params.wgsl"

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(4) var<uniform> params: Params;

// #include "summary.wgsl"

// #include "normalise.wgsl"

fn aligned(row: u32, lid: u32) {
  let quads = params.d / 4u;
  let first = row * quads;
  let last = first + quads - 1u;
  let span = WG * PER;
  let stats = reduce_summary(aligned_summary(first, 0u, quads, lid), lid);
  let mean = stats.y;
  let rstd = inverseSqrt(stats.z / stats.x + params.eps);
  let channel0 = (row % params.groups) * params.per_group;
  for (var block = (quads + span - 1u) / span; block > 0u; block--) {
    let j = (block - 1u) * span + lid;
    let v0 = x[min(first + j, last)];
    let v1 = x[min(first + j + WG, last)];
    let v2 = x[min(first + j + 2u * WG, last)];
    let v3 = x[min(first + j + 3u * WG, last)];
    put_quad(first, j, quads, v0, mean, rstd, channel0);
    put_quad(first, j + WG, quads, v1, mean, rstd, channel0);
    put_quad(first, j + 2u * WG, quads, v2, mean, rstd, channel0);
    put_quad(first, j + 3u * WG, quads, v3, mean, rstd, channel0);
  }
}

fn ragged(row: u32, lid: u32) {
  let d = params.d;
  let first = row * d;
  let last = first + d - 1u;
  let span = WG * PER;
  let stats = reduce_summary(ragged_summary(first, 0u, d, lid), lid);
  let mean = stats.y;
  let rstd = inverseSqrt(stats.z / stats.x + params.eps);
  let channel0 = (row % params.groups) * params.per_group;
  for (var block = (d + span - 1u) / span; block > 0u; block--) {
    let j = (block - 1u) * span + lid;
    let v0 = element(min(first + j, last));
    let v1 = element(min(first + j + WG, last));
    let v2 = element(min(first + j + 2u * WG, last));
    let v3 = element(min(first + j + 3u * WG, last));
    put_element(first, j, d, v0, mean, rstd, channel0);
    put_element(first, j + WG, d, v1, mean, rstd, channel0);
    put_element(first, j + 2u * WG, d, v2, mean, rstd, channel0);
    put_element(first, j + 3u * WG, d, v3, mean, rstd, channel0);
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) grid: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * grid.x;
  if (row >= params.rows) {
    return;
  }
  if (params.d % 4u == 0u && params.l % 4u == 0u) {
    aligned(row, lid);
  } else {
    ragged(row, lid);
  }
}
