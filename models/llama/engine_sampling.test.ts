import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import type { Constraint } from "../../llm/constraints/constraint.ts";
import { sampleNext, type SamplerOptions } from "../../llm/sampler.ts";
import type { WeightFormat } from "../../llm/weights/format.ts";
import { LlamaEngine } from "./engine.ts";
import { fixtureReference, maxAbsDiff, openFixture, type Variant } from "./fixtures_test_util.ts";
import { LlamaReference } from "./reference.ts";
import { boundaryMargin } from "../../ops/sample/margin_test_util.ts";

type Sample = Extract<SamplerOptions, { mode: "sample" }>;

/**
 * f32 rounding of the kernel's own sums, on top of what the logits' difference explains (below).
 */
const KERNEL_ROUNDING = 1e-4;

const STEPS = 32;

/** The reference forward with `sampleNext` on its logits: the ids, each step's logits and its margin. */
async function referenceRun(variant: Variant, format: WeightFormat, prompt: number[], options: Sample) {
  const { config, store, close } = await openFixture(variant);
  const model = await LlamaReference.load(store, config, format).finally(close);
  const V = config.vocabSize;
  let logits: Float32Array = model.forward(prompt).slice((prompt.length - 1) * V);
  const ids: number[] = [];
  const steps: { logits: Float32Array; margin: number }[] = [];
  for (let step = 0; step < STEPS; step++) {
    steps.push({ logits, margin: boundaryMargin(logits, options, step) });
    const id = sampleNext(logits, ids, options);
    ids.push(id);
    logits = model.forward([id]);
  }
  return { ids, steps };
}

// Seeds chosen so that every step is clear of boundaries (the test checks it): with a 128-token
// vocabulary the draw's running sums lie ~1/128 apart, so a run of 32 steps is often not clear
// (tiny-gqa q8 seeds 99 and 7, tiny-llama3 q4g128 seeds 7, 31337 and 1, tiny-headdim f32 31337).
const CASES: [Variant, WeightFormat, Sample][] = [
  ["tiny-gqa", "f32", { mode: "sample", temperature: 0.8, topK: 20, topP: 0.9, minP: 0.02, seed: 1234 }],
  ["tiny-gqa", "q8", { mode: "sample", temperature: 1, seed: 31337 }],
  ["tiny-llama3", "q4g128", { mode: "sample", temperature: 0.7, topP: 0.8, seed: 2 }],
  ["tiny-headdim", "f32", { mode: "sample", temperature: 1.2, topK: 8, minP: 0.1, seed: 99 }],
];

for (const [variant, format, options] of CASES) {
  gpuTest(
    `engine: ${variant} ${format}, seeded sampling on the GPU equals sampleNext on the reference's logits over ${STEPS} steps`,
    async (gpu) => {
      const { prompt } = await fixtureReference(variant, format);
      const expected = await referenceRun(variant, format, prompt, options);
      const { config, store, close } = await openFixture(variant);
      const engine = await LlamaEngine.load(gpu, store, { ...config, eosTokenIds: [] }, { format, maxSeq: 64 })
        .finally(close);
      try {
        const got: number[] = [];
        for await (const id of engine.generate(prompt, { maxTokens: STEPS, sampler: options, readEvery: 5 })) {
          got.push(id);
        }
        // Clear of boundaries: the engine's logits on the same tokens differ from the reference's by
        // delta, which moves a ratio of two probabilities by a factor of at most exp(2 delta / T), and
        // every cut-off and the draw are such ratios.
        const V = config.vocabSize;
        const logits = await engine.forward([...prompt, ...expected.ids.slice(0, STEPS - 1)]);
        let delta = 0;
        for (const [step, { logits: ref }] of expected.steps.entries()) {
          const row = logits.subarray((prompt.length - 1 + step) * V, (prompt.length + step) * V);
          delta = Math.max(delta, maxAbsDiff(row, ref));
        }
        const needed = 2 * delta / options.temperature + KERNEL_ROUNDING;
        for (const [step, { margin }] of expected.steps.entries()) {
          assert(
            margin > needed,
            `step ${step}: within ${margin.toExponential(2)} of a boundary (need ${
              needed.toExponential(2)
            }); choose another case`,
          );
        }
        assertEquals(got, expected.ids);
        // Not the greedy run: the draw made choices of its own.
        const greedy: number[] = [];
        for await (const id of engine.generate(prompt, { maxTokens: STEPS })) greedy.push(id);
        assert(greedy.some((id, i) => id !== got[i]), "sampling chose other tokens than greedy");
      } finally {
        engine.destroy();
      }
    },
  );
}

/** A rule that changes with the prefix: a dozen ids, any id, or a single id, by step. */
class StepRule implements Constraint {
  constructor(readonly vocab: number, readonly emptyAt = -1) {}
  nextAllowed(prefix: readonly number[]): ReadonlySet<number> | null {
    const n = prefix.length;
    if (n === this.emptyAt) return new Set();
    if (n % 4 === 1) return null;
    if (n % 4 === 3) return new Set([(3 * n + prefix[n - 1]) % this.vocab]);
    return new Set(Array.from({ length: 12 }, (_, j) => (13 * n + 5 * j + prefix.length) % this.vocab));
  }
}

gpuTest(
  "engine: a constraint masks the logits on the GPU, greedy and seeded, as sampleNext applies it",
  async (gpu) => {
    const variant = "tiny-gqa";
    const format = "f32";
    const { prompt } = await fixtureReference(variant, format);
    const { config, store, close } = await openFixture(variant);
    const model = await LlamaReference.load(store, config, format);
    const engine = await LlamaEngine.load(gpu, store, { ...config, eosTokenIds: [] }, { format, maxSeq: 48 })
      .finally(close);
    const V = config.vocabSize;
    const rule = new StepRule(V);
    const masked = (logits: Float32Array, prefix: number[]) => {
      const allowed = rule.nextAllowed(prefix);
      return allowed ? logits.map((z, i) => allowed.has(i) ? z : -Infinity) : logits;
    };
    try {
      const samplers: SamplerOptions[] = [
        { mode: "greedy" },
        { mode: "sample", temperature: 0.9, topK: 30, topP: 0.95, seed: 5 },
      ];
      for (const sampler of samplers) {
        model.reset();
        let logits: Float32Array = model.forward(prompt).slice((prompt.length - 1) * V);
        const expected: number[] = [];
        for (let step = 0; step < 16; step++) {
          const row = masked(logits, expected);
          if (sampler.mode === "greedy") {
            // Clear of ties within the engine's logit error (a few 1e-6 on this fixture): the best leads by 1e-3.
            const sorted = [...row].filter((z) => z > -Infinity).sort((a, b) => b - a);
            assert(sorted.length < 2 || sorted[0] - sorted[1] > 1e-3, `step ${step}: greedy tie within 1e-3`);
          } else {
            const margin = boundaryMargin(row, sampler, step);
            assert(margin > 2e-4, `step ${step}: within ${margin.toExponential(2)} of a boundary; choose another case`);
          }
          const id = sampleNext(logits, expected, sampler, rule);
          expected.push(id);
          logits = model.forward([id]);
        }
        const got: number[] = [];
        for await (const id of engine.generate(prompt, { maxTokens: 16, sampler, constraint: rule })) got.push(id);
        assertEquals(got, expected, sampler.mode);
        assert(got.some((id, n) => n % 4 === 3 && id === (3 * n + got[n - 1]) % V), "single-id steps honoured");
      }
      // An empty set ends generation with an error naming the step, after the ids before it.
      const got: number[] = [];
      await assertThrowsMessage(async () => {
        for await (const id of engine.generate(prompt, { maxTokens: 8, constraint: new StepRule(V, 2) })) got.push(id);
      }, /LlamaEngine.generate: the constraint allows no token after 2 generated tokens/);
      assertEquals(got.length, 2);
    } finally {
      engine.destroy();
    }
  },
);
