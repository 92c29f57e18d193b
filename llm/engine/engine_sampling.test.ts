import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { gpuTest } from "../../harness/testing.ts";
import { sampleNext, type SamplerOptions } from "../sampler.ts";
import type { WeightFormat } from "../weights/format.ts";
import { LlamaEngine } from "./engine.ts";
import { fixtureReference, maxAbsDiff, openFixture, type Variant } from "./fixtures_test_util.ts";
import { LlamaReference } from "./reference.ts";
import { boundaryMargin } from "./sampling_test_util.ts";

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
