/**
 * Next-token sampling on the CPU: greedy, or temperature with top-k, top-p and min-p, drawn from a
 * counter-based random number so that a run repeats exactly and a GPU kernel can reproduce it.
 *
 * Order of operations (each step is pinned by a test that fails under the other order):
 * 1. The constraint, if any: tokens outside `nextAllowed(generatedSoFar)` get logit -Infinity,
 *    before anything else, so no setting can sample outside the set. An empty set throws.
 * 2. Greedy: the highest logit; ties go to the lowest id. Nothing below applies.
 * 3. Temperature: logits / temperature, then softmax (f64, max-subtracted).
 * 4. top-k: keep the k most probable (ties: lower id first).
 * 5. top-p: renormalize what is left, then keep the most probable tokens until their cumulative
 *    probability reaches p (at least one).
 * 6. min-p: keep tokens whose probability is at least minP times the most probable one's.
 *    This is transformers' order (temperature, top-k, top-p, min-p).
 * 7. Draw: u = drawUniform(seed, step) with step = generatedSoFar.length; walk the kept tokens in
 *    ascending id order, summing probabilities, and take the first whose running sum exceeds
 *    u × (sum of kept probabilities). Ascending-id order, not sorted order, so a GPU kernel
 *    needs a prefix sum, not a sort, for the draw.
 *
 * The random draw is defined to the bit: r = pcgHash((pcgHash(step) + seed) mod 2^32) with the
 * PCG-RXS-M-XS 32-bit hash (Jarzynski & Olano, "Hash Functions for GPU Rendering", 2020), and
 * u = (r >>> 8) / 2^24, which is exact in f32. The same seed and step give the same u on any
 * device; the token agrees as long as the probabilities agree to the precision that separates
 * the candidates (this reference works in f64; an f32 kernel can differ only where a cut-off or
 * the draw falls within rounding of a boundary).
 *
 * No repetition penalty, on purpose (the specification's decision): a per-seen-token logit
 * penalty was measured on a Japanese model to degrade output rather than stop loops, and a caller
 * that wants to discourage repetition can express it as a Constraint, the module's one tool for
 * narrowing the next token.
 *
 * @module
 */
import type { Constraint } from "./constraints/constraint.ts";

/** How to choose the next token. */
export type SamplerOptions =
  | { readonly mode: "greedy" }
  | {
    readonly mode: "sample";
    /** > 0; 1 leaves the distribution as the logits give it. */
    readonly temperature: number;
    /** Keep the k most probable tokens; omitted = all. */
    readonly topK?: number;
    /** Nucleus mass in (0, 1]; omitted = 1. */
    readonly topP?: number;
    /** Relative floor in [0, 1); omitted = 0. */
    readonly minP?: number;
    /** Unsigned 32-bit seed. */
    readonly seed: number;
  };

/**
 * PCG-RXS-M-XS 32-bit hash of a u32.
 *
 * @param x An unsigned 32-bit integer.
 * @returns Its hash, an unsigned 32-bit integer.
 * @example
 * ```ts
 * import { pcgHash } from "@xpu/ops/llm";
 * pcgHash(0); // 129708002
 * ```
 */
export function pcgHash(x: number): number {
  const state = (Math.imul(x >>> 0, 747796405) + 2891336453) >>> 0;
  const word = Math.imul(((state >>> ((state >>> 28) + 4)) ^ state) >>> 0, 277803737) >>> 0;
  return ((word >>> 22) ^ word) >>> 0;
}

/**
 * The uniform draw of one sampling step.
 *
 * @param seed Unsigned 32-bit seed.
 * @param step The step (tokens generated before this one).
 * @returns u in [0, 1), a multiple of 2^-24.
 * @example
 * ```ts
 * import { drawUniform } from "@xpu/ops/llm";
 * drawUniform(42, 0) === drawUniform(42, 0); // true: a run repeats exactly
 * ```
 */
export function drawUniform(seed: number, step: number): number {
  const r = pcgHash((pcgHash(step) + (seed >>> 0)) >>> 0);
  return (r >>> 8) / 16777216;
}

/** The tokens left after steps 3-6, ids ascending, with their renormalized probabilities. */
export interface Candidates {
  /** Kept token ids, ascending. */
  readonly ids: number[];
  /** Their probabilities after the filters, renormalized to sum to 1. */
  readonly probs: number[];
}

function validateOptions(options: SamplerOptions): void {
  if (options.mode === "greedy") return;
  if (options.mode !== "sample") {
    throw new Error(`sampleNext: mode must be "greedy" or "sample", got ${(options as { mode: string }).mode}`);
  }
  const { temperature, topK, topP, minP, seed } = options;
  if (!(Number.isFinite(temperature) && temperature > 0)) {
    throw new Error(`sampleNext: temperature must be finite and > 0, got ${temperature}`);
  }
  if (topK !== undefined && !(Number.isInteger(topK) && topK >= 1)) {
    throw new Error(`sampleNext: topK must be an integer >= 1, got ${topK}`);
  }
  if (topP !== undefined && !(topP > 0 && topP <= 1)) {
    throw new Error(`sampleNext: topP must be in (0, 1], got ${topP}`);
  }
  if (minP !== undefined && !(minP >= 0 && minP < 1)) {
    throw new Error(`sampleNext: minP must be in [0, 1), got ${minP}`);
  }
  if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff)) {
    throw new Error(`sampleNext: seed must be an unsigned 32-bit integer, got ${seed}`);
  }
}

/**
 * Steps 3-6: the candidates a draw chooses among.
 *
 * @param logits One logit per token id.
 * @param options A "sample" mode.
 * @param allowed The constraint's set (null = all).
 * @returns The kept ids (ascending) and their probabilities, summing to 1.
 * @example
 * ```ts
 * import { samplingCandidates } from "@xpu/ops/llm";
 * const logits = new Float32Array([0.5, 2.0, 1.0]);
 * const { ids, probs } = samplingCandidates(logits, { mode: "sample", temperature: 1, topK: 2, seed: 0 });
 * ids; // [1, 2]: the two most probable, ascending
 * probs; // [0.731..., 0.268...]: e^2 and e^1, renormalized
 * ```
 */
export function samplingCandidates(
  logits: ArrayLike<number>,
  options: Extract<SamplerOptions, { mode: "sample" }>,
  allowed?: ReadonlySet<number> | null,
): Candidates {
  validateOptions(options);
  const ids: number[] = [];
  for (let i = 0; i < logits.length; i++) {
    if (Number.isNaN(logits[i])) throw new Error(`sampleNext: logit ${i} is NaN`);
    if (logits[i] === Infinity && (allowed == null || allowed.has(i))) {
      // softmax of +Infinity is NaN (torch.multinomial refuses such probabilities): no distribution to draw from
      throw new Error(`sampleNext: logit ${i} is +Infinity, and sampling needs finite logits (greedy picks it)`);
    }
    if ((allowed == null || allowed.has(i)) && logits[i] !== -Infinity) ids.push(i);
  }
  if (ids.length === 0) throw new Error("sampleNext: no allowed token has a finite logit");
  const scaled = ids.map((i) => logits[i] / options.temperature);
  let max = -Infinity;
  for (const z of scaled) if (z > max) max = z; // not Math.max(...scaled): a 150k-entry spread can overflow the stack
  let p = scaled.map((z) => Math.exp(z - max));
  let order = ids.map((_, k) => k).sort((a, b) => p[b] - p[a] || ids[a] - ids[b]);
  if (options.topK !== undefined) order = order.slice(0, options.topK);
  if (options.topP !== undefined && options.topP < 1) {
    const total = order.reduce((s, k) => s + p[k], 0);
    let cumulative = 0;
    let keep = 0;
    while (keep < order.length) {
      cumulative += p[order[keep++]] / total;
      if (cumulative >= options.topP) break;
    }
    order = order.slice(0, keep);
  }
  if (options.minP !== undefined && options.minP > 0) {
    const floor = options.minP * p[order[0]];
    order = order.filter((k) => p[k] >= floor);
  }
  order.sort((a, b) => ids[a] - ids[b]);
  const total = order.reduce((s, k) => s + p[k], 0);
  p = order.map((k) => p[k] / total);
  return { ids: order.map((k) => ids[k]), probs: p };
}

/**
 * Step 7: the token a uniform draw selects.
 *
 * @param candidates From samplingCandidates.
 * @param u In [0, 1).
 * @returns The first id whose running probability sum exceeds u.
 * @example
 * ```ts
 * import { drawFromCandidates } from "@xpu/ops/llm";
 * const candidates = { ids: [3, 8], probs: [0.25, 0.75] };
 * drawFromCandidates(candidates, 0.1); // 3
 * drawFromCandidates(candidates, 0.5); // 8
 * ```
 */
export function drawFromCandidates(candidates: Candidates, u: number): number {
  const total = candidates.probs.reduce((s, x) => s + x, 0);
  let cumulative = 0;
  for (let k = 0; k < candidates.ids.length; k++) {
    cumulative += candidates.probs[k];
    if (cumulative > u * total) return candidates.ids[k];
  }
  return candidates.ids[candidates.ids.length - 1];
}

/**
 * Chooses the next token.
 *
 * @param logits One logit per token id.
 * @param generatedSoFar Tokens generated so far; its length is the step the draw is keyed by,
 *   and it is what the constraint sees.
 * @param options Greedy, or sampling settings with a seed.
 * @param constraint Optional rule on the next token.
 * @returns The token id.
 * @example
 * ```ts
 * import { sampleNext } from "@xpu/ops/llm";
 * const logits = new Float32Array([0.5, 2.0, 1.0]);
 * sampleNext(logits, [], { mode: "greedy" }); // 1
 * sampleNext(logits, [], { mode: "sample", temperature: 0.8, topP: 0.9, seed: 7 }); // same id on every run
 * ```
 */
export function sampleNext(
  logits: ArrayLike<number>,
  generatedSoFar: readonly number[],
  options: SamplerOptions,
  constraint?: Constraint,
): number {
  validateOptions(options);
  if (logits.length === 0) throw new Error("sampleNext: logits is empty");
  const allowed = constraint ? constraint.nextAllowed(generatedSoFar) : null;
  if (allowed !== null) {
    if (allowed.size === 0) throw new Error("sampleNext: the constraint allows no token after this prefix");
    for (const id of allowed) {
      if (!Number.isInteger(id) || id < 0 || id >= logits.length) {
        throw new Error(`sampleNext: the constraint allows id ${id}, outside [0, ${logits.length})`);
      }
    }
  }
  if (options.mode === "greedy") {
    let best = -1;
    for (let i = 0; i < logits.length; i++) {
      if (Number.isNaN(logits[i])) throw new Error(`sampleNext: logit ${i} is NaN`);
      if (allowed !== null && !allowed.has(i)) continue;
      if (best < 0 || logits[i] > logits[best]) best = i;
    }
    if (logits[best] === -Infinity) {
      throw new Error("sampleNext: every allowed logit is -Infinity, so no token is possible");
    }
    return best;
  }
  const candidates = samplingCandidates(logits, options, allowed);
  return drawFromCandidates(candidates, drawUniform(options.seed, generatedSoFar.length));
}
