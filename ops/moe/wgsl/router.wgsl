// moe/router: softmax over E experts, then the top k, one invocation per token of logits [T, E].
//
// Pass 1 finds the row's maximum, pass 2 the sum of exp(l - max). The k choices are found without
// a local array: choice r is the greatest (logit, -index) strictly below choice r - 1 in that order,
// so equal logits are taken in index order (the lower expert first). Gates are exp(l - max) / sum,
// or divided by the sum over the k chosen when norm_topk_prob is set.
struct Params {
  tokens: u32,
  experts: u32,
  k: u32,
  norm_topk_prob: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> chosen: array<i32>;
@group(0) @binding(2) var<storage, read_write> gates: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const WG = 256u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let t = (wid.x + wid.y * groups.x) * WG + lid.x;
  if (t >= params.tokens) {
    return;
  }
  let row = t * params.experts;
  var top = logits[row];
  for (var e = 1u; e < params.experts; e++) {
    top = max(top, logits[row + e]);
  }
  var sum = 0.0;
  for (var e = 0u; e < params.experts; e++) {
    sum += exp(logits[row + e] - top);
  }
  // A NaN sum (a NaN or +inf logit, or every logit -inf; read from the bits, which a compiler cannot
  // fold away) is a NaN softmax: every probability ties, so the row takes experts 0 .. k - 1 by the
  // tie rule, with NaN gates. The comparisons below never see a NaN logit.
  if ((bitcast<u32>(sum) & 0x7fffffffu) > 0x7f800000u) {
    for (var r = 0u; r < params.k; r++) {
      chosen[t * params.k + r] = i32(r);
      gates[t * params.k + r] = sum;
    }
    return;
  }
  var previous = 0.0;
  var previous_index = -1;  // no choice yet: every expert is a candidate
  var chosen_sum = 0.0;
  for (var r = 0u; r < params.k; r++) {
    var best = 0.0;
    var best_index = -1;
    for (var e = 0u; e < params.experts; e++) {
      let l = logits[row + e];
      let after = previous_index < 0 || l < previous || (l == previous && i32(e) > previous_index);
      if (after && (best_index < 0 || l > best)) {
        best = l;
        best_index = i32(e);
      }
    }
    let w = exp(best - top);
    chosen[t * params.k + r] = best_index;
    gates[t * params.k + r] = w;
    chosen_sum += w;
    previous = best;
    previous_index = best_index;
  }
  let divisor = select(sum, chosen_sum, params.norm_topk_prob == 1u);
  for (var r = 0u; r < params.k; r++) {
    gates[t * params.k + r] = gates[t * params.k + r] / divisor;
  }
}
