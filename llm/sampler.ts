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
 * Steps 3-7 are ops/sample's definitions (its reference, which the GPU kernels are held to), re-exported
 * here. The random draw is defined to the bit: r = pcgHash((pcgHash(step) + seed) mod 2^32) with the
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
import { drawFromCandidates, drawUniform, samplingCandidates, validateSampleOptions } from "../ops/sample/reference.ts";
import { checkKeys } from "../ops/validate.ts";

/** The keys sampling settings may carry. */
const SAMPLE_OPTION_KEYS = ["mode", "temperature", "topK", "topP", "minP", "seed"];

// The draw's definitions live with the op whose kernels are held to them (ops/sample).
export {
  type Candidates,
  drawFromCandidates,
  drawUniform,
  pcgHash,
  samplingCandidates,
} from "../ops/sample/reference.ts";

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

function validateOptions(options: SamplerOptions): void {
  if (options === null || typeof options !== "object") {
    throw new Error(
      `sampleNext: options must be { mode: "greedy" } or { mode: "sample", ... }, got ${String(options)}`,
    );
  }
  if (options.mode === "greedy") {
    checkKeys("sampleNext", "option", options, ["mode"]);
    return;
  }
  if (options.mode === "sample") checkKeys("sampleNext", "option", options, SAMPLE_OPTION_KEYS);
  if (options.mode !== "sample") {
    throw new Error(`sampleNext: mode must be "greedy" or "sample", got ${(options as { mode: string }).mode}`);
  }
  validateSampleOptions("sampleNext: ", options);
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
  if (!Array.isArray(logits) && !(ArrayBuffer.isView(logits) && !(logits instanceof DataView))) {
    throw new Error(`sampleNext: logits must be an array or typed array of logits, got ${String(logits)}`);
  }
  if (!Array.isArray(generatedSoFar)) {
    throw new Error(`sampleNext: generatedSoFar must be an array of token ids, got ${String(generatedSoFar)}`);
  }
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
