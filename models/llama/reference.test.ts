import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { WEIGHT_FORMATS } from "../../llm/weights/format.ts";
import { fixtureReference, maxAbsDiff, openFixture, type Variant, VARIANTS } from "./fixtures_test_util.ts";
import { loadWeights } from "./weights.ts";
import { dequantizeWeight, LlamaReference } from "./reference.ts";
import { ropeFrequencies } from "./rope.ts";
import { TINY_CONFIG } from "./config.ts";

/**
 * Logits agree with transformers' (f32 on its CPU) to this absolute difference; the logits are of
 * order 1-10, and the difference is f32 rounding in torch against f64 here.
 */
const LOGIT_TOLERANCE = 1e-4; // measured: at most 1.9e-5 (tiny-tied), 3.2e-6 elsewhere

for (const variant of Object.keys(VARIANTS) as Variant[]) {
  for (const format of WEIGHT_FORMATS) {
    Deno.test(`reference: ${variant} ${format}: prefill and 8 decode steps match transformers, 32 greedy tokens equal`, async () => {
      const { config, store, close } = await openFixture(variant);
      const model = await LlamaReference.load(store, config, format).finally(close);
      const ref = await fixtureReference(variant, format);
      const V = config.vocabSize;
      const prefill = model.forward(ref.prompt);
      const diffs = [maxAbsDiff(prefill, ref.prefillLogits)];
      for (let i = 0; i < 8; i++) {
        diffs.push(maxAbsDiff(model.forward([ref.greedy[i]]), ref.decodeLogits.subarray(i * V, (i + 1) * V)));
      }
      assert(
        Math.max(...diffs) < LOGIT_TOLERANCE,
        `max |logit diff| per call: ${diffs.map((d) => d.toExponential(2))}`,
      );
      assertEquals(model.greedy(ref.prompt, 32), ref.greedy);
    });
  }
}

Deno.test("reference: default RoPE frequencies are theta^(-2i/d), unscaled", () => {
  const { invFreq, attentionScaling } = ropeFrequencies(TINY_CONFIG, 1);
  assertEquals(attentionScaling, 1);
  assert(Math.abs(invFreq[1] - Math.pow(10000, -2 / 12)) < 1e-7);
  assert(Math.abs(invFreq[5] - Math.pow(10000, -10 / 12)) < 1e-9);
});

Deno.test("reference: a token id outside the vocabulary is refused by name", async () => {
  const { config, store, close } = await openFixture("tiny-gqa");
  const model = await LlamaReference.load(store, config).finally(close);
  let message = "";
  try {
    model.forward([1, 128]);
  } catch (e) {
    message = (e as Error).message;
  }
  assert(/ids\[1\] = 128/.test(message), message);
});

Deno.test("reference: RoPE scaling facts derived by hand from transformers' formulas", () => {
  const base = { ...TINY_CONFIG, maxPositionEmbeddings: 16 }; // headDim 12, theta 10000
  const plain = ropeFrequencies(base, 1).invFreq;
  const linear = ropeFrequencies({ ...base, ropeScaling: { ropeType: "linear", factor: 4 } }, 1).invFreq;
  assertEquals([...linear], [...plain].map((v) => Math.fround(v / 4)));
  const dynamic = {
    ...base,
    ropeScaling: { ropeType: "dynamic" as const, factor: 2, originalMaxPositionEmbeddings: 16 },
  };
  assertEquals([...ropeFrequencies(dynamic, 16).invFreq], [...plain]); // not longer than max: unscaled
  // seq 32 = 2 max: theta' = theta * (2 * 2 - 1)^(12 / 10); inv_freq[1] = theta'^(-2/12).
  const theta = 10000 * Math.pow(3, 12 / 10);
  assert(Math.abs(ropeFrequencies(dynamic, 32).invFreq[1] - Math.pow(theta, -2 / 12)) < 1e-7);
  const yarn = {
    ...base,
    ropeScaling: {
      ropeType: "yarn" as const,
      factor: 4,
      originalMaxPositionEmbeddings: 16,
      attentionFactor: null,
      betaFast: 32,
      betaSlow: 1,
      mscale: null,
      mscaleAllDim: null,
      truncate: true,
    },
  };
  const y = ropeFrequencies(yarn, 1);
  assert(Math.abs(y.attentionScaling - (0.1 * Math.log(4) + 1)) < 1e-12);
  // Channel 0 (the fastest rotation) is extrapolated (unchanged), the slowest interpolated (/ factor).
  assertEquals(y.invFreq[0], plain[0]);
  assert(Math.abs(y.invFreq[5] - plain[5] / 4) < 1e-9);
});

Deno.test("reference: linearInput is what each product reads, called once per token with its weight's name", async () => {
  const { config, store, close } = await openFixture("tiny-gqa");
  const weights = new Map<string, Float64Array>();
  try {
    for await (const w of loadWeights(store, config, { format: "f32" })) weights.set(w.spec.name, dequantizeWeight(w));
  } finally {
    close();
  }
  const ids = [5, 6, 7];
  const plain = new LlamaReference(config, weights).forward(ids);
  const seen = new Map<string, number>();
  const linearInput = (name: string, x: Float64Array) => {
    seen.set(name, (seen.get(name) ?? 0) + 1);
    return x;
  };
  assertEquals(new LlamaReference(config, weights, { linearInput }).forward(ids), plain);
  const layer = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj"]
    .concat(["mlp.up_proj", "mlp.down_proj"]);
  const products = Array.from(
    { length: config.numHiddenLayers },
    (_, l) => layer.map((p) => `model.layers.${l}.${p}.weight`),
  )
    .flat().concat("lm_head.weight");
  assertEquals([...seen.keys()].sort(), products.sort());
  for (const name of products) assertEquals(seen.get(name), ids.length);
  // What it returns is what the product reads: the head reading zeros gives zero logits.
  const zeroHead = (name: string, x: Float64Array) => (name === "lm_head.weight" ? new Float64Array(x.length) : x);
  assert(new LlamaReference(config, weights, { linearInput: zeroHead }).forward(ids).every((v) => v === 0));
});
