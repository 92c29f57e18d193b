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
import { headSteps } from "./embedding.ts";
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

/** Runs a generation on the loop kept on the GPU (ids read back in groups), collecting the ids. */
async function generated(lm: Qwen3ForCausalLM, prompt: number[], options: Qwen3GenerateOptions = {}) {
  const ids: number[] = [];
  for await (const id of lm.generate(prompt, options)) ids.push(id);
  return ids;
}

/** Runs a generation with `onLogits` (each step's logits read back), collecting the ids and the logits. */
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
    // The loop on the GPU, its ids read back: in groups of 3 with two readbacks in flight (steps queued
    // ahead of the ids in hand), with the defaults (one group of 9 after the first), one at a time.
    for (const grouping of [{ readEvery: 3, inFlight: 2 }, {}, { readEvery: 1, inFlight: 1 }]) {
      const ids = await generated(lm, PROMPT, { maxTokens: STEPS, stopIds: [], ...grouping });
      deepStrictEqual(ids, want.ids, `${label}: greedy ids, readbacks ${JSON.stringify(grouping)}`);
    }
    ok(new Set(want.ids).size > 3, `${label}: the continuation is not one repeated id (${want.ids})`);
    // With onLogits: each step's logits, and the same ids.
    const got = await run(lm, PROMPT, { maxTokens: STEPS, stopIds: [] });
    deepStrictEqual(got.ids, want.ids, `${label}: greedy ids with onLogits`);
    strictEqual(got.logits.length, STEPS);
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
      deepStrictEqual(await generated(lm, prompt, { maxTokens: 6, stopIds: [], readEvery: 2 }), want.ids);
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
    // The embedding and the head are 300 x 64 f32 (76,800 bytes), the largest projections 128 x 64
    // (32,768): at 32 KiB a binding each table is three blocks (128 + 128 + 44 rows); at 40,000 bytes
    // a block holds 156 rows, cut to a multiple of the rows whose logits fill the storage offset
    // alignment (128 rows at 256 bytes, 156 at 16), so each block's logits are a view of one tensor.
    const whole = await Qwen3ForCausalLM.load(gpu, store, config);
    try {
      const a = await run(whole, PROMPT, { maxTokens: 4, stopIds: [] });
      for (const limit of [32768, 40000]) {
        const blocked = await Qwen3ForCausalLM.load(
          gpu.withLimits({ maxStorageBufferBindingSize: limit }),
          store,
          config,
        );
        try {
          const b = await run(blocked, PROMPT, { maxTokens: 4, stopIds: [] });
          deepStrictEqual(b.ids, a.ids, `${limit}: ids`);
          deepStrictEqual(await generated(blocked, PROMPT, { maxTokens: 4, stopIds: [] }), a.ids, `${limit}: ids`);
          // Each logit is one row's dot product with the same vector, by the same kernel: equal bits.
          b.logits.forEach((l, i) => assertClose(l, a.logits[i], { atol: 0, rtol: 0 }, `${limit}: step ${i}`));
        } finally {
          blocked.destroy();
        }
      }
    } finally {
      whole.destroy();
    }
    // A head whose second block would begin inside an alignment (fewer rows a binding than it holds,
    // at no real size) is refused by name, not bound at an offset the device rejects (where the
    // alignment is one f32, every row is aligned).
    const t = gpu.alloc("f32", 64);
    try {
      const blocks = [{ row0: 0, rows: 1, table: t }, { row0: 1, rows: 1, table: t }];
      const steps = () => headSteps(gpu, { rows: 2, cols: 32, blocks }, t, t);
      if (gpu.device.limits.minStorageBufferOffsetAlignment > 4) {
        await assertThrowsMessage(steps, "the head's row block at row 1 cannot write its logits into a view");
      } else strictEqual(steps().length, 2);
    } finally {
      t.buffer.destroy();
    }
  },
);

gpuTest(
  "qwen3 causal LM: generation stops after a stop id (yielded) or maxTokens, steps queued past it discarded; one model runs again",
  async (gpu) => {
    const config = tiny(true);
    const store = await randomQwen3(config, 7);
    const lm = await Qwen3ForCausalLM.load(gpu, store, config);
    let free: number[];
    try {
      free = await generated(lm, PROMPT, { maxTokens: 8, stopIds: [] });
      strictEqual(free.length, 8);
      // The stop id lands inside a group of 4 whose later steps (and the next group's) are already
      // submitted: nothing after it is yielded, and the model is free for the next call.
      const stop = free[2];
      const stopped = await generated(lm, PROMPT, { maxTokens: 8, stopIds: [stop], readEvery: 4 });
      deepStrictEqual(stopped, free.slice(0, free.indexOf(stop) + 1));
      deepStrictEqual((await run(lm, PROMPT, { maxTokens: 8, stopIds: [stop] })).ids, stopped, "with onLogits");
      // A consumer that stops early (break) frees the model too.
      for await (const _ of lm.generate(PROMPT, { maxTokens: 8, stopIds: [] })) break;
      const ref = new Qwen3Reference(config, await readQwen3Weights(store, config));
      deepStrictEqual(
        await generated(lm, [7], { maxTokens: 1, stopIds: [] }),
        ref.greedy([7], 1),
        "a one-token prompt",
      );
    } finally {
      lm.destroy();
    }
    // Without stopIds, the config's eos_token_id stops it.
    const withEos = await Qwen3ForCausalLM.load(gpu, store, { ...config, eosTokenIds: [free[1]] });
    try {
      deepStrictEqual(await generated(withEos, PROMPT, { maxTokens: 8 }), free.slice(0, free.indexOf(free[1]) + 1));
    } finally {
      withEos.destroy();
    }
  },
);

gpuTest(
  "qwen3 causal LM prepare: its programs, run by hand, choose the reference's ids on the GPU; feed replays a step; one at a time",
  async (gpu) => {
    const config = tiny(true);
    const store = await randomQwen3(config, 7);
    const ref = new Qwen3Reference(config, await readQwen3Weights(store, config));
    const want = expected(ref, PROMPT, 3);
    const lm = await Qwen3ForCausalLM.load(gpu, store, config);
    const g = lm.prepare(PROMPT, 3);
    try {
      strictEqual(g.promptLength, PROMPT.length);
      strictEqual(g.maxTokens, 3);
      strictEqual(g.capacity, PROMPT.length + 2);
      await assertThrowsMessage(() => lm.prepare([1]), "a generation is already running on this model");
      await assertThrowsMessage(() => lm.destroy(), "destroy() while a generation runs");
      // Each run's choice is the next decode run's input, its position advanced on the GPU.
      await g.prefill.run();
      assertClose(await g.logits(), want.logits[0], LOGITS, "prefill's logits");
      strictEqual(await g.chosen(), want.ids[0], "prefill's choice");
      for (const step of [1, 2]) {
        await g.decode.run();
        assertClose(await g.logits(), want.logits[step], LOGITS, `decode step ${step}`);
        strictEqual(await g.chosen(), want.ids[step], `decode step ${step}'s choice`);
      }
      // A position before the cache's free ones, or past its end, and a bad id, are refused by name.
      await assertThrowsMessage(
        () => g.feed(want.ids[0], PROMPT.length - 1),
        "position must be an integer in [7, 9)",
      );
      await assertThrowsMessage(() => g.feed(want.ids[0], PROMPT.length + 2), "got 9");
      await assertThrowsMessage(() => g.feed(300, PROMPT.length), "id = 300 is not a token id in [0, 300)");
      // Fed back to the first decode position, the loop replays from there: position 8, visible when
      // step 2 ran, is masked again, so step 1 gives its logits again, then step 2.
      g.feed(want.ids[0], PROMPT.length);
      await g.decode.run();
      assertClose(await g.logits(), want.logits[1], LOGITS, "decode step 1 replayed");
      await g.decode.run();
      assertClose(await g.logits(), want.logits[2], LOGITS, "decode step 2 replayed");
      // A fed id other than the chosen one: the reference's logits after that prefix.
      const other = (want.ids[0] + 1) % config.vocabSize;
      g.feed(other, PROMPT.length);
      await g.decode.run();
      const V = config.vocabSize, prefix = [...PROMPT, other];
      assertClose(await g.logits(), ref.logits(prefix).slice((prefix.length - 1) * V), LOGITS, "a fed id");
      g.destroy();
      await assertThrowsMessage(async () => await g.logits(), "generation used after destroy()");
      await assertThrowsMessage(async () => await g.chosen(), "generation used after destroy()");
      // Destroyed, it no longer holds the model: generate runs.
      deepStrictEqual(await generated(lm, PROMPT, { maxTokens: 3, stopIds: [] }), want.ids);
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
    await assertThrowsMessage(() => drain([1], { readEvery: 0 }), "readEvery must be an integer >= 1, got 0");
    await assertThrowsMessage(() => drain([1], { inFlight: 2.5 }), "inFlight must be an integer >= 1, got 2.5");
    await assertThrowsMessage(() => drain([1], { readevery: 2 } as never), "readevery");
    const onLogits = () => {};
    await assertThrowsMessage(
      () => drain([1], { onLogits, readEvery: 0 }),
      "readEvery must be an integer >= 1, got 0",
    );
    await assertThrowsMessage(
      () => drain([1], { onLogits: 5 as never }),
      "qwen3: onLogits must be a function, got 5",
    );
    await assertThrowsMessage(
      () => drain([1], { stopIds: 5 as never }),
      "qwen3: stopIds must be an array of token ids in [0, 300), got 5",
    );
    await assertThrowsMessage(
      () => drain([1], { stopIds: [2, 300] }),
      "qwen3: stopIds must be an array of token ids in [0, 300), got [2,300]",
    );
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
