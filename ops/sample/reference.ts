/**
 * Reference for sample: choosing the next token from a row of logits, what correct means, in plain
 * TypeScript (f64). These are the definitions `sampleNext` (llm/sampler.ts) applies and the GPU
 * kernels are held to:
 *
 * - {@link argmaxToken}: the greedy choice, the first index of the largest logit (torch.argmax:
 *   ties to the lower index, +Infinity chosen like any other largest value).
 * - {@link sampleToken}: the seeded draw. Order of operations (each pinned by a test that fails
 *   under the other order): temperature (logits / T, then softmax, max-subtracted), top-k (the k
 *   most probable, ties to the lower id), top-p (renormalise what is left, keep the most probable
 *   until their cumulative probability reaches p, at least one), min-p (keep p >= minP × the most
 *   probable's), then the draw: `u = drawUniform(seed, step)`, the kept tokens walked in ascending
 *   id order, the first whose running sum exceeds `u × (sum of kept probabilities)`. That is
 *   transformers' order (temperature, top-k, top-p, min-p); the ascending-id walk makes the draw a
 *   prefix sum on a GPU, not a sort.
 * - {@link maskLogits}: a constraint's set as a bitset (bit `i % 32` of word `i / 32` set: id i
 *   allowed); disallowed ids get -Infinity, which neither choice takes.
 *
 * The draw is defined to the bit: `r = pcgHash((pcgHash(step) + seed) mod 2^32)` with the
 * PCG-RXS-M-XS 32-bit hash (Jarzynski & Olano, "Hash Functions for GPU Rendering", 2020) and
 * `u = (r >>> 8) / 2^24`, exact in f32.
 *
 * What a kernel cannot throw it writes as a marker instead of an id: {@link NONFINITE_LOGITS} for a
 * row holding NaN (or, for the draw, +Infinity: softmax of +Infinity is NaN, torch.multinomial
 * refuses it), {@link NO_POSSIBLE_TOKEN} for a row with no logit above -Infinity. `sampleNext`
 * throws in those cases; the references here return the markers, as the kernels write them. Both
 * markers are above any vocabulary a u32 id can address in practice (2^32 - 2 and 2^32 - 1).
 *
 * @module
 */

import { requireArgs, requireArray, requireInt } from "../validate.ts";

/** The id a sampler writes instead of a token when the row's logits hold NaN (or, for the draw, +Infinity). */
export const NONFINITE_LOGITS = 0xfffffffe;

/** The id a sampler writes when no logit is above -Infinity: no token is possible. */
export const NO_POSSIBLE_TOKEN = 0xffffffff;

/** The seeded draw's settings: `sampleNext`'s "sample" mode (its `mode` may be given, and is not read). */
export interface SampleOptions {
  /** `"sample"`, when the object is a `SamplerOptions` of llm/sampler.ts. */
  readonly mode?: "sample";
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
}

/**
 * Checks a draw's settings.
 *
 * @param where the message's prefix, e.g. `"sampleNext: "`
 * @param options the settings
 * @param f32 also require what a kernel needs: a temperature that stays finite and > 0 in f32, a
 *   topK below 2^32
 * @throws Error naming the field, what was expected and what was given
 *
 * @example
 * ```ts
 * import { validateSampleOptions } from "@xpu/ops/ops/sample";
 * validateSampleOptions("demo: ", { temperature: 0.8, topK: 40, seed: 1 }); // passes
 * ```
 */
export function validateSampleOptions(where: string, options: SampleOptions, f32 = false): void {
  requireArgs(where.replace(/: ?$/, ""), "options", options, "{ temperature, topK?, topP?, minP?, seed }");
  const { temperature, topK, topP, minP, seed } = options;
  const t32 = Math.fround(temperature);
  if (!(Number.isFinite(temperature) && temperature > 0 && (!f32 || (t32 > 0 && t32 < Infinity)))) {
    throw new Error(`${where}temperature must be finite and > 0${f32 ? " in f32" : ""}, got ${temperature}`);
  }
  if (topK !== undefined && !(Number.isInteger(topK) && topK >= 1 && (!f32 || topK <= 0xffffffff))) {
    throw new Error(`${where}topK must be an integer ${f32 ? "in [1, 2^32)" : ">= 1"}, got ${topK}`);
  }
  if (topP !== undefined && !(topP > 0 && topP <= 1)) {
    throw new Error(`${where}topP must be in (0, 1], got ${topP}`);
  }
  if (minP !== undefined && !(minP >= 0 && minP < 1)) {
    throw new Error(`${where}minP must be in [0, 1), got ${minP}`);
  }
  if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff)) {
    throw new Error(`${where}seed must be an unsigned 32-bit integer, got ${seed}`);
  }
}

/**
 * PCG-RXS-M-XS 32-bit hash of a u32.
 *
 * @param x An unsigned 32-bit integer.
 * @returns Its hash, an unsigned 32-bit integer.
 * @example
 * ```ts
 * import { pcgHash } from "@xpu/ops/ops/sample";
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
 * import { drawUniform } from "@xpu/ops/ops/sample";
 * drawUniform(42, 0) === drawUniform(42, 0); // true: a run repeats exactly
 * ```
 */
export function drawUniform(seed: number, step: number): number {
  const r = pcgHash((pcgHash(step) + (seed >>> 0)) >>> 0);
  return (r >>> 8) / 16777216;
}

/** The tokens the filters keep, ids ascending, with their renormalized probabilities. */
export interface Candidates {
  /** Kept token ids, ascending. */
  readonly ids: number[];
  /** Their probabilities after the filters, renormalized to sum to 1. */
  readonly probs: number[];
}

/**
 * Temperature, top-k, top-p and min-p: the candidates a draw chooses among.
 *
 * @param logits One logit per token id.
 * @param options The draw's settings.
 * @param allowed A constraint's set (null or absent = all): other ids are not candidates.
 * @returns The kept ids (ascending) and their probabilities, summing to 1.
 * @throws Error for a NaN logit, an allowed +Infinity one (no distribution to draw from), no
 *   allowed finite logit, or settings {@link validateSampleOptions} refuses
 * @example
 * ```ts
 * import { samplingCandidates } from "@xpu/ops/ops/sample";
 * const logits = new Float32Array([0.5, 2.0, 1.0]);
 * const { ids, probs } = samplingCandidates(logits, { temperature: 1, topK: 2, seed: 0 });
 * ids; // [1, 2]: the two most probable, ascending
 * probs; // [0.731..., 0.268...]: e^2 and e^1, renormalized
 * ```
 */
export function samplingCandidates(
  logits: ArrayLike<number>,
  options: SampleOptions,
  allowed?: ReadonlySet<number> | null,
): Candidates {
  validateSampleOptions("samplingCandidates: ", options);
  const ids: number[] = [];
  for (let i = 0; i < logits.length; i++) {
    if (Number.isNaN(logits[i])) throw new Error(`samplingCandidates: logit ${i} is NaN`);
    if (logits[i] === Infinity && (allowed == null || allowed.has(i))) {
      // softmax of +Infinity is NaN (torch.multinomial refuses such probabilities): no distribution to draw from
      throw new Error(
        `samplingCandidates: logit ${i} is +Infinity, and sampling needs finite logits (greedy picks it)`,
      );
    }
    if ((allowed == null || allowed.has(i)) && logits[i] !== -Infinity) ids.push(i);
  }
  if (ids.length === 0) throw new Error("samplingCandidates: no allowed token has a finite logit");
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
 * The token a uniform draw selects.
 *
 * @param candidates From samplingCandidates.
 * @param u In [0, 1).
 * @returns The first id whose running probability sum exceeds u.
 * @example
 * ```ts
 * import { drawFromCandidates } from "@xpu/ops/ops/sample";
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

/** Arguments of {@link argmaxToken}. */
export interface ArgmaxTokenArgs {
  /** One row of logits, at least one. */
  logits: Float32Array;
}

/** Arguments of {@link sampleToken}: the row, the draw's settings and its step. */
export interface SampleTokenArgs extends SampleOptions {
  /** One row of logits, at least one. */
  logits: Float32Array;
  /** The draw's step (tokens generated before this one), a u32. */
  step: number;
}

/** Arguments of {@link maskLogits}. */
export interface MaskLogitsArgs {
  /** One row of logits, at least one. */
  logits: Float32Array;
  /** `ceil(logits.length / 32)` words: bit `i % 32` of word `i / 32` set, id i allowed. */
  mask: Uint32Array;
}

const SAMPLE_KEYS = ["temperature", "topK", "topP", "minP", "seed", "mode"] as const;

function requireLogits(op: string, args: { logits: Float32Array }, fields: string, keys: readonly string[]): void {
  requireArgs(op, "args", args, fields, keys);
  requireArray(op, "logits", args.logits, "Float32Array");
  requireInt(op, "vocab (logits.length)", args.logits.length, 1, 0xfffffffd);
}

/**
 * Validates {@link argmaxToken}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the argument when `logits` is not a non-empty Float32Array, or an unknown key
 *
 * @example
 * ```ts
 * import { validateArgmaxToken } from "@xpu/ops/ops/sample";
 * validateArgmaxToken({ logits: new Float32Array(3) }); // passes
 * ```
 */
export function validateArgmaxToken(args: ArgmaxTokenArgs): void {
  requireLogits("argmaxToken", args, "{ logits }", ["logits"]);
}

/**
 * Validates {@link sampleToken}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the argument, as {@link validateSampleOptions}, a bad step or logits, or an unknown key
 *
 * @example
 * ```ts
 * import { validateSampleToken } from "@xpu/ops/ops/sample";
 * validateSampleToken({ logits: new Float32Array(3), temperature: 0.8, seed: 1, step: 0 }); // passes
 * ```
 */
export function validateSampleToken(args: SampleTokenArgs): void {
  const fields = "{ logits, temperature, topK?, topP?, minP?, seed, step }";
  requireLogits("sampleToken", args, fields, ["logits", "step", ...SAMPLE_KEYS]);
  // In f32, as the kernel holds them: the reference and the GPU call refuse the same settings alike.
  validateSampleOptions("sampleToken: ", args, true);
  requireInt("sampleToken", "step", args.step, 0, 0xffffffff);
}

/**
 * Validates {@link maskLogits}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the argument when `logits` or `mask` has the wrong type or length, or an unknown key
 *
 * @example
 * ```ts
 * import { validateMaskLogits } from "@xpu/ops/ops/sample";
 * validateMaskLogits({ logits: new Float32Array(33), mask: new Uint32Array(2) }); // passes
 * ```
 */
export function validateMaskLogits(args: MaskLogitsArgs): void {
  requireLogits("maskLogits", args, "{ logits, mask }", ["logits", "mask"]);
  requireArray("maskLogits", "mask", args.mask, "Uint32Array", [
    Math.ceil(args.logits.length / 32),
    "ceil(vocab / 32)",
  ]);
}

/**
 * The greedy choice: the first index of the largest logit (torch.argmax; +Infinity included), or
 * {@link NONFINITE_LOGITS} when the row holds NaN, {@link NO_POSSIBLE_TOKEN} when no logit is
 * above -Infinity.
 *
 * @param args the row of logits
 * @returns the id, or a marker
 * @throws Error naming the argument, as {@link validateArgmaxToken}
 *
 * @example
 * ```ts
 * import { argmaxToken } from "@xpu/ops/ops/sample";
 * argmaxToken({ logits: new Float32Array([1, 3, 3, 2]) }); // 1
 * ```
 */
export function argmaxToken(args: ArgmaxTokenArgs): number {
  validateArgmaxToken(args);
  const { logits } = args;
  if (logits.some(Number.isNaN)) return NONFINITE_LOGITS;
  let best = -1;
  for (let i = 0; i < logits.length; i++) {
    if (logits[i] > -Infinity && (best < 0 || logits[i] > logits[best])) best = i;
  }
  return best < 0 ? NO_POSSIBLE_TOKEN : best;
}

/**
 * The seeded draw of step `step` (the module doc's order of operations), or a marker: NaN or
 * +Infinity in the row give {@link NONFINITE_LOGITS}, no finite logit {@link NO_POSSIBLE_TOKEN}.
 *
 * @param args the row of logits, the draw's settings and its step
 * @returns the id, or a marker
 * @throws Error naming the argument, as {@link validateSampleToken}
 *
 * @example
 * ```ts
 * import { sampleToken } from "@xpu/ops/ops/sample";
 * const logits = new Float32Array([0.5, 2.0, 1.0]);
 * sampleToken({ logits, temperature: 0.8, topP: 0.9, seed: 7, step: 0 }); // the same id on every run
 * ```
 */
export function sampleToken(args: SampleTokenArgs): number {
  validateSampleToken(args);
  const { logits, step } = args;
  if (logits.some((x) => Number.isNaN(x) || x === Infinity)) return NONFINITE_LOGITS;
  if (!logits.some((x) => x > -Infinity)) return NO_POSSIBLE_TOKEN;
  return drawFromCandidates(samplingCandidates(logits, args), drawUniform(args.seed, step));
}

/**
 * A constraint's mask applied to a row of logits: ids whose bit in `mask` (bit `i % 32` of word
 * `i / 32`) is clear get -Infinity; the others keep their logit.
 *
 * @param args the row of logits and the mask
 * @returns the masked logits (a new array)
 * @throws Error naming the argument, as {@link validateMaskLogits}
 *
 * @example
 * ```ts
 * import { maskLogits } from "@xpu/ops/ops/sample";
 * maskLogits({ logits: new Float32Array([1, 2, 3]), mask: new Uint32Array([0b101]) }); // [1, -Infinity, 3]
 * ```
 */
export function maskLogits(args: MaskLogitsArgs): Float32Array {
  validateMaskLogits(args);
  const { logits, mask } = args;
  return logits.map((x, i) => ((mask[i >>> 5] >>> (i & 31)) & 1) === 0 ? -Infinity : x);
}
