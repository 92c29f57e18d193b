/**
 * Test helpers for the GPU sampler: how far a case lies from the boundaries where an f32 kernel may
 * legitimately choose differently from the f64 reference (the module doc of ops/sample lists them). Computed in f64
 * from the logits with the reference's own candidates, never from the kernel. Used by tests alone.
 *
 * @module
 */

import { drawUniform, type SampleOptions, samplingCandidates } from "./reference.ts";

type Sample = SampleOptions;

/**
 * The smallest relative distance from this step's cut-offs and draw to a boundary between two
 * tokens, each measured against the quantity an f32 kernel rounds: the draw `u × kept mass`
 * against every running sum of the kept tokens (ascending id), over the kept mass; the top-p mass
 * against every running sum of the top-k survivors (descending probability), over their mass;
 * the min-p floor against every probability, over the floor; and the k-th against the (k+1)-th
 * probability, over the k-th, when they are not exact ties (equal logits give equal
 * probabilities in f32 as in f64).
 *
 * @param logits the step's logits
 * @param options the sampler
 * @param step the draw's step
 * @returns the margin, a relative distance
 */
export function boundaryMargin(logits: ArrayLike<number>, options: Sample, step: number): number {
  const scaled = Array.from(logits, (z) => z / options.temperature);
  const max = scaled.reduce((m, z) => Math.max(m, z), -Infinity);
  const raw = scaled.map((z) => Math.exp(z - max));
  const sum = raw.reduce((s, x) => s + x, 0);
  const p = raw.map((x) => x / sum);
  let margin = Infinity;
  const order = p.map((_, i) => i).sort((a, b) => p[b] - p[a] || a - b);
  const k = Math.min(options.topK ?? p.length, p.length);
  if (k < p.length && logits[order[k - 1]] !== logits[order[k]]) {
    margin = Math.min(margin, (p[order[k - 1]] - p[order[k]]) / p[order[k - 1]]);
  }
  const survivors = order.slice(0, k);
  const mass = survivors.reduce((s, i) => s + p[i], 0);
  if (options.topP !== undefined && options.topP < 1) {
    let cumulative = 0;
    for (const i of survivors) {
      cumulative += p[i];
      margin = Math.min(margin, Math.abs(cumulative - options.topP * mass) / mass);
    }
  }
  if (options.minP) {
    const floor = options.minP * p[order[0]];
    for (const x of p) margin = Math.min(margin, Math.abs(x - floor) / floor);
  }
  const kept = samplingCandidates(logits, options);
  const keptMass = kept.ids.reduce((s, i) => s + p[i], 0);
  const target = drawUniform(options.seed, step) * keptMass;
  let cumulative = 0;
  for (const i of kept.ids) {
    cumulative += p[i];
    margin = Math.min(margin, Math.abs(cumulative - target) / keptMass);
  }
  return margin;
}
