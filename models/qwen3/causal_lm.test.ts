import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { ResidentDevice } from "../../harness/device.ts";
import { assertClose, assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { quantize } from "../../ops/quantize/reference.ts";
import {
  QWEN3_STOP_TOKENS,
  qwen3ChatPrompt,
  Qwen3ForCausalLM,
  type Qwen3GenerateOptions,
  qwen3StopIds,
} from "./causal_lm.ts";
import { parseQwen3Config, type Qwen3Config } from "./config.ts";
import { randomQwen3 } from "./fixtures_test_util.ts";
import type { Qwen3Format } from "./linear.ts";
import { type Qwen3HostWeights, Qwen3Reference, readQwen3Weights } from "./reference.ts";

/** A random model of the fixture script's shape: head_dim 32 with hidden 64 and 4 heads (not 16). */
const tiny = (tie: boolean): Qwen3Config =>
  parseQwen3Config({
    model_type: "qwen3",
    hidden_size: 64,
    intermediate_size: 96,
    num_hidden_layers: 3,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 32,
    vocab_size: 300,
    rope_theta: 1e6,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: tie,
    eos_token_id: 299,
  });
const PROMPT = [5, 17, 99, 3, 120, 250, 1];
const STEPS = 10;

// GPU logits against the f64 reference's on the same prefix: f32 sums in other orders through 3
// layers of hidden 64. Measured on lavapipe: at most 3.6e-6 (logits of order 1). The greedy choices'
// smallest top-1/top-2 gap in these runs is 1.5e-3, so equal tokens are not luck of a wide tolerance.
const LOGITS = { atol: 1e-4, rtol: 1e-4 };

/** Runs a generation, collecting the ids and each step's logits. */
async function run(lm: Qwen3ForCausalLM, prompt: number[], options: Qwen3GenerateOptions = {}) {
  const ids: number[] = [], logits: Float32Array[] = [];
  for await (const id of lm.generate(prompt, { ...options, onLogits: (l) => logits.push(l) })) ids.push(id);
  return { ids, logits };
}

/** The reference's greedy ids and each step's last-position logits. */
function expected(ref: Qwen3Reference, prompt: number[], steps: number) {
  const ids = ref.greedy(prompt, steps);
  const V = ref.config.vocabSize, seq = [...prompt];
  const logits = ids.map((id) => {
    const l = ref.logits(seq).slice((seq.length - 1) * V);
    seq.push(id);
    return l;
  });
  return { ids, logits };
}

/** The weights with every projection and the (untied) head replaced by their q8 dequantisation. */
function q8Dequantised(weights: Qwen3HostWeights, config: Qwen3Config): Qwen3HostWeights {
  const out: Qwen3HostWeights = new Map();
  for (const [name, w] of weights) {
    if (!name.endsWith("_proj.weight")) {
      out.set(name, w); // the embedding and the head stay f32 in q8
      continue;
    }
    const cols = /down_proj/.test(name)
      ? config.intermediateSize
      : /o_proj/.test(name)
      ? config.numAttentionHeads * config.headDim
      : config.hiddenSize;
    const { codes, scales } = quantize({ x: w, rows: w.length / cols, cols });
    out.set(name, Float32Array.from(codes, (c, i) => c * scales[Math.floor(i / cols)]));
  }
  return out;
}

async function check(gpu: ResidentDevice, store: TensorStore, config: Qwen3Config, format: Qwen3Format, label: string) {
  const weights = await readQwen3Weights(store, config);
  const ref = new Qwen3Reference(config, format === "q8" ? q8Dequantised(weights, config) : weights);
  const want = expected(ref, PROMPT, STEPS);
  const lm = await Qwen3ForCausalLM.load(gpu, store, config, { format });
  try {
    const got = await run(lm, PROMPT, { maxTokens: STEPS, stopIds: [] });
    deepStrictEqual(got.ids, want.ids, `${label}: greedy ids`);
    ok(new Set(got.ids).size > 3, `${label}: the continuation is not one repeated id (${got.ids})`);
    got.logits.forEach((l, i) => assertClose(l, want.logits[i], LOGITS, `${label}: logits of step ${i}`));
  } finally {
    lm.destroy();
  }
}

gpuTest(
  "qwen3 causal LM f32: greedy ids and every step's logits equal the reference's, tied and untied heads",
  async (gpu) => {
    for (const tie of [true, false]) {
      const config = tiny(tie);
      await check(gpu, await randomQwen3(config, 7), config, "f32", tie ? "tied" : "untied");
    }
  },
);

gpuTest("qwen3 causal LM q8: greedy ids and logits equal the reference's on q8-dequantised weights", async (gpu) => {
  const config = tiny(true);
  await check(gpu, await randomQwen3(config, 8), config, "q8", "q8");
});

gpuTest(
  "qwen3 causal LM: a cache of two decode chunks (the second masked whole at first) gives the reference's logits",
  async (gpu) => {
    // gqa's decode path splits the cache into chunks of 128 positions: a 125-token prompt and 6 new
    // tokens make a cache of 130, whose second chunk holds no written position for the first 3 steps.
    const config = tiny(false);
    const store = await randomQwen3(config, 11);
    const prompt = Array.from({ length: 125 }, (_, i) => (i * 97 + 5) % config.vocabSize);
    const want = expected(new Qwen3Reference(config, await readQwen3Weights(store, config)), prompt, 6);
    const lm = await Qwen3ForCausalLM.load(gpu, store, config);
    try {
      const got = await run(lm, prompt, { maxTokens: 6, stopIds: [] });
      deepStrictEqual(got.ids, want.ids);
      got.logits.forEach((l, i) => assertClose(l, want.logits[i], LOGITS, `step ${i} (position ${124 + i})`));
    } finally {
      lm.destroy();
    }
  },
);

gpuTest(
  "qwen3 causal LM: a head and embedding over the binding limit, in row blocks, give the same logits exactly",
  async (gpu) => {
    const config = tiny(false);
    const store = await randomQwen3(config, 9);
    // The embedding and the head are 300 x 64 f32 (76,800 bytes), the largest projection 96 x 64
    // (24,576): at 32 KiB a binding each table is three blocks (128 + 128 + 44 rows).
    const small = gpu.withLimits({ maxStorageBufferBindingSize: 32768 });
    const whole = await Qwen3ForCausalLM.load(gpu, store, config);
    const blocked = await Qwen3ForCausalLM.load(small, store, config);
    try {
      const a = await run(whole, PROMPT, { maxTokens: 4, stopIds: [] });
      const b = await run(blocked, PROMPT, { maxTokens: 4, stopIds: [] });
      deepStrictEqual(b.ids, a.ids);
      // Each logit is one row's dot product with the same vector, by the same kernel: equal bits.
      b.logits.forEach((l, i) => assertClose(l, a.logits[i], { atol: 0, rtol: 0 }, `step ${i}`));
    } finally {
      whole.destroy();
      blocked.destroy();
    }
  },
);

gpuTest(
  "qwen3 causal LM: generation stops after a stop id (yielded) or maxTokens; one model runs again",
  async (gpu) => {
    const config = tiny(true);
    const store = await randomQwen3(config, 7);
    const lm = await Qwen3ForCausalLM.load(gpu, store, config);
    let free: number[];
    try {
      free = (await run(lm, PROMPT, { maxTokens: 5, stopIds: [] })).ids;
      strictEqual(free.length, 5);
      const stopped = await run(lm, PROMPT, { maxTokens: 5, stopIds: [free[2]] });
      deepStrictEqual(stopped.ids, free.slice(0, free.indexOf(free[2]) + 1));
      strictEqual((await run(lm, [7], { maxTokens: 1, stopIds: [] })).ids.length, 1, "a one-token prompt, one token");
    } finally {
      lm.destroy();
    }
    // Without stopIds, the config's eos_token_id stops it.
    const withEos = await Qwen3ForCausalLM.load(gpu, store, { ...config, eosTokenIds: [free[1]] });
    try {
      deepStrictEqual((await run(withEos, PROMPT, { maxTokens: 5 })).ids, free.slice(0, free.indexOf(free[1]) + 1));
    } finally {
      withEos.destroy();
    }
  },
);

gpuTest(
  "qwen3 causal LM prepare: its prefill and decode programs, driven by hand, give the reference's logits; one at a time",
  async (gpu) => {
    const config = tiny(true);
    const store = await randomQwen3(config, 7);
    const ref = new Qwen3Reference(config, await readQwen3Weights(store, config));
    const want = expected(ref, PROMPT, 3);
    const lm = await Qwen3ForCausalLM.load(gpu, store, config);
    const g = lm.prepare(PROMPT, 3);
    try {
      strictEqual(g.promptLength, PROMPT.length);
      strictEqual(g.capacity, PROMPT.length + 2);
      await assertThrowsMessage(() => lm.prepare([1]), "a generation is already running on this model");
      await assertThrowsMessage(() => lm.destroy(), "destroy() while a generation runs");
      await g.prefill.run();
      assertClose(await g.logits(), want.logits[0], LOGITS, "prefill's logits");
      // A position before the cache's free ones, or past its end, and a bad id, are refused by name.
      await assertThrowsMessage(
        () => g.feed(want.ids[0], PROMPT.length - 1),
        "position must be an integer in [7, 9)",
      );
      await assertThrowsMessage(() => g.feed(want.ids[0], PROMPT.length + 2), "got 9");
      await assertThrowsMessage(() => g.feed(300, PROMPT.length), "id = 300 is not a token id in [0, 300)");
      for (const step of [1, 2]) {
        g.feed(want.ids[step - 1], PROMPT.length + step - 1);
        await g.decode.run();
        assertClose(await g.logits(), want.logits[step], LOGITS, `decode step ${step}`);
      }
      // Running a program again replays the same step: the decode at the last fed position, same logits.
      const again = await g.logits();
      await g.decode.run();
      assertClose(await g.logits(), again, { atol: 0, rtol: 0 }, "the same decode step replayed");
      g.destroy();
      await assertThrowsMessage(async () => await g.logits(), "generation used after destroy()");
      // Destroyed, it no longer holds the model: generate runs.
      const ids: number[] = [];
      for await (const id of lm.generate(PROMPT, { maxTokens: 3, stopIds: [] })) ids.push(id);
      deepStrictEqual(ids, want.ids);
    } finally {
      g.destroy(); // a second destroy does nothing
      lm.destroy();
    }
  },
);

gpuTest("qwen3 causal LM: bad prompts and options are refused by name before any GPU work", async (gpu) => {
  const config = tiny(true);
  const lm = await Qwen3ForCausalLM.load(gpu, await randomQwen3(config, 7), config);
  const drain = async (ids: number[], options: Qwen3GenerateOptions = {}) => {
    for await (const _ of lm.generate(ids, options)) { /* drained */ }
  };
  try {
    await assertThrowsMessage(() => drain([1, 300]), "ids[1] = 300 is not a token id in [0, 300)");
    await assertThrowsMessage(() => drain([]), "at least one token");
    await assertThrowsMessage(() => drain([1], { maxTokens: 0 }), "maxTokens must be an integer >= 1");
    // A cache past the binding limit is refused with the capacity that would fit.
    const small = gpu.withLimits({ maxStorageBufferBindingSize: 32768 });
    const capped = await Qwen3ForCausalLM.load(small, await randomQwen3(config, 7), config);
    try {
      await assertThrowsMessage(
        async () => {
          for await (const _ of capped.generate([1], { maxTokens: 200 })) { /* drained */ }
        },
        "a KV cache of 200 positions is 51200 bytes a layer for K (and as much for V), over this device's binding limit of 32768: at most 128 positions",
      );
    } finally {
      capped.destroy();
    }
  } finally {
    lm.destroy();
  }
});

Deno.test("qwen3 chat: the one-turn template, and the stop tokens through a tokenizer", () => {
  strictEqual(qwen3ChatPrompt("hi"), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  deepStrictEqual(QWEN3_STOP_TOKENS, ["<|im_end|>", "<|endoftext|>"]);
  const vocab = new Map([["<|im_end|>", 151645], ["<|endoftext|>", 151643]]);
  deepStrictEqual(
    qwen3StopIds({ encode: (t) => vocab.has(t) ? [vocab.get(t)!] : [...t].map((c) => c.charCodeAt(0)) }),
    [
      151645,
      151643,
    ],
  );
  let threw = false;
  try {
    qwen3StopIds({ encode: (t) => [...t].map((c) => c.charCodeAt(0)) });
  } catch (e) {
    threw = /encodes <\|im_end\|> as 10 ids/.test((e as Error).message);
  }
  ok(threw, "a tokenizer without the added tokens is refused by name");
});
