import { deepStrictEqual, ok as assert, strictEqual } from "node:assert/strict";
import { assertClose, assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { scopedStore } from "../../llm/weights/checkpoint.ts";
import { quantize } from "../../ops/quantize/reference.ts";
import { Qwen3Encoder } from "./encoder.ts";
import { animaEncoderCases, animaTiny } from "./fixtures_test_util.ts";
import { type Qwen3HostWeights, Qwen3Reference, readQwen3Weights } from "./reference.ts";

// The GPU against transformers (torch 2.11 on the CPU, f32) and against the f64 reference: f32
// products and reductions in other orders over a 2-layer model of hidden 40. Measured on lavapipe:
// at most 2.0e-6 from transformers (last_hidden_state; layer 0: 9.5e-7), on values of order 1. The
// tolerance leaves room for other kernels' orders on other adapters, and none for a wrong
// convention (the reference test shows RoPE's pairing moves layer 0's output by 0.8).
const F32 = { atol: 3e-5, rtol: 3e-5 };

/** The weights with every Linear matrix replaced by its q8 dequantisation, f32(code · scale). */
function q8Dequantised(weights: Qwen3HostWeights, shapes: Map<string, readonly number[]>): Qwen3HostWeights {
  const out: Qwen3HostWeights = new Map();
  for (const [name, w] of weights) {
    if (!/_proj\.weight$/.test(name)) {
      out.set(name, w);
      continue;
    }
    const [rows, cols] = shapes.get(name)!;
    const { codes, scales } = quantize({ x: w, rows, cols });
    out.set(name, Float32Array.from(codes, (code, i) => code * scales[Math.floor(i / cols)]));
  }
  return out;
}

gpuTest(
  "qwen3 encoder f32: last_hidden_state, layer 0 and the embeddings equal transformers' (Anima tiny)",
  async (gpu) => {
    const { config, store } = await animaTiny();
    const cases = await animaEncoderCases();
    const last = await Qwen3Encoder.load(gpu, store, config);
    const layer0 = await Qwen3Encoder.load(gpu, store, config, { hiddenState: -2 }); // 2 layers: -2 is layer 0's output
    const embed = await Qwen3Encoder.load(gpu, store, config, { hiddenState: 0 });
    try {
      strictEqual(layer0.hiddenState, 1);
      // hidden_states[-2] needs neither the last layer nor the final norm, and they are not loaded.
      assert(layer0.weightBytes < last.weightBytes, `${layer0.weightBytes} bytes, the whole model ${last.weightBytes}`);
      for (const c of cases) {
        assertClose(await last.encode(c.ids), c.lastHiddenState, F32, `${c.name} last_hidden_state`);
        if (c.layer0) assertClose(await layer0.encode(c.ids), c.layer0, F32, `${c.name} hidden_states[-2]`);
        if (c.embed) assertClose(await embed.encode(c.ids), c.embed, { atol: 0, rtol: 0 }, `${c.name} embeddings`);
      }
    } finally {
      [last, layer0, embed].forEach((e) => e.destroy());
    }
  },
);

gpuTest(
  "qwen3 encoder, embedding on the host: the GPU lookup's states exactly (f32 and q8), no table loaded, only the prompts' rows read",
  async (gpu) => {
    const { config, store } = await animaTiny();
    const cases = await animaEncoderCases();
    const table = "model.embed_tokens.weight";
    const whole: string[] = [], rows: number[] = [];
    const counting: TensorStore = {
      tensors: store.tensors,
      metadata: store.metadata,
      info: (name) => store.info(name),
      read: (name) => (whole.push(name), store.read(name)),
      readFloat32: (name) => (whole.push(name), store.readFloat32(name)),
      readRows: (name, row0, n) => {
        if (name === table) { for (let r = row0; r < row0 + n; r++) rows.push(r); }
        return store.readRows(name, row0, n);
      },
    };
    for (const [format, hiddenState] of [["f32", -1], ["f32", 0], ["q8", -1]] as const) {
      const onGpu = await Qwen3Encoder.load(gpu, store, config, { format, hiddenState });
      const onHost = await Qwen3Encoder.load(gpu, counting, config, { format, hiddenState, embedding: "host" });
      try {
        strictEqual(onGpu.weightBytes - onHost.weightBytes, 4 * config.vocabSize * config.hiddenSize, "the table");
        for (const c of cases) {
          rows.length = 0;
          const got = await onHost.encode(c.ids);
          assertClose(got, await onGpu.encode(c.ids), { atol: 0, rtol: 0 }, `${format} ${hiddenState} ${c.name}`);
          if (hiddenState === 0 && c.embed) assertClose(got, c.embed, { atol: 0, rtol: 0 }, `${c.name} embeddings`);
          // Each distinct id's row read once, no other row.
          deepStrictEqual(rows.sort((a, b) => a - b), [...new Set(c.ids)].sort((a, b) => a - b), c.name);
        }
      } finally {
        onGpu.destroy();
        onHost.destroy();
      }
    }
    strictEqual(whole.includes(table), false, "the table was read whole");
    await assertThrowsMessage(
      () => Qwen3Encoder.load(gpu, store, config, { embedding: "cpu" as "host" }),
      'embedding must be "gpu" or "host", got "cpu"',
    );
  },
);

gpuTest(
  "qwen3 encoder q8: the reference on q8-dequantised weights, and transformers' f32 within q8's error",
  async (gpu) => {
    const { config, store } = await animaTiny();
    const weights = await readQwen3Weights(store, config);
    const shapes = new Map(store.tensors.map((t) => [t.name.replace(/^model\./, ""), t.shape]));
    const dequantised = new Qwen3Reference(config, q8Dequantised(weights, shapes));
    const encoder = await Qwen3Encoder.load(gpu, store, config, { format: "q8" });
    try {
      for (const c of await animaEncoderCases()) {
        const got = await encoder.encode(c.ids);
        const want = dequantised.hiddenStates(c.ids);
        // The same weights as the reference's, so only f32 ordering differs.
        assertClose(got, want[want.length - 1], F32, `${c.name} q8 against the reference on dequantised weights`);
        // Against transformers' f32 model: per-row int8 weights move this model's output by up to 0.049
        // (lavapipe: cond 0.049, uncond 0.021; layer 0 0.031).
        assertClose(got, c.lastHiddenState, { atol: 0.1, rtol: 0 }, `${c.name} q8 against transformers' f32`);
      }
    } finally {
      encoder.destroy();
    }
  },
);

gpuTest("qwen3 encoder: the program of a length is built once and replayed on new ids", async (gpu) => {
  const { config, store } = await animaTiny();
  const ref = new Qwen3Reference(config, await readQwen3Weights(store, config));
  const [cond] = await animaEncoderCases();
  const other = Int32Array.from(cond.ids, (id, i) => (id * 7 + i * 13) % config.vocabSize);
  const encoder = await Qwen3Encoder.load(gpu, store, config);
  try {
    const first = await encoder.encode(cond.ids);
    const bytes = encoder.programBytes;
    const second = await encoder.encode(other);
    strictEqual(encoder.programBytes, bytes, "a second prompt of the same length allocates nothing");
    const want = ref.hiddenStates(other);
    assertClose(second, want[want.length - 1], F32, "second prompt");
    assertClose(await encoder.encode(cond.ids), first, { atol: 0, rtol: 0 }, "the first prompt again");
    encoder.release(cond.ids.length);
    strictEqual(encoder.programBytes, 0);
  } finally {
    encoder.destroy();
  }
});

gpuTest(
  "qwen3 encoder: an embedding table over the binding limit is held in row blocks, and gives the same states",
  async (gpu) => {
    const { config, store } = await animaTiny();
    const cases = await animaEncoderCases();
    // The embedding is 128 x 40 f32 (20,480 bytes); the largest Linear weight 96 x 40 (15,360). At
    // 15,360 bytes a binding, the table is two blocks (96 + 32 rows, or 64 + 64 where the storage offset
    // alignment is 256 bytes: embedding.ts) and the ids of both cases fall in both.
    const small = gpu.withLimits({ maxStorageBufferBindingSize: 15360 });
    const whole = await Qwen3Encoder.load(gpu, store, config);
    const blocked = await Qwen3Encoder.load(small, store, config);
    try {
      assert(cases.some((c) => c.ids.some((id) => id >= 96)) && cases.some((c) => c.ids.some((id) => id < 64)));
      for (const c of cases) {
        assertClose(
          await blocked.encode(c.ids),
          await whole.encode(c.ids),
          { atol: 0, rtol: 0 },
          `${c.name} in blocks`,
        );
      }
    } finally {
      whole.destroy();
      blocked.destroy();
    }
    // A Linear weight over the limit is refused at load, naming it and the limit.
    await assertThrowsMessage(
      () => Qwen3Encoder.load(gpu.withLimits({ maxStorageBufferBindingSize: 8192 }), store, config),
      "layers.0.mlp.gate_proj.weight: the weight [96, 40] is 15360 bytes in f32, over this device's binding limit of 8192",
    );
  },
);

gpuTest("qwen3 encoder: a bare Qwen3Model checkpoint (no model. prefix) gives the same states", async (gpu) => {
  const { config, store } = await animaTiny();
  const [cond] = await animaEncoderCases();
  const bare = await Qwen3Encoder.load(gpu, scopedStore(store, "model."), config);
  try {
    assertClose(await bare.encode(cond.ids), cond.lastHiddenState, F32, "bare names");
  } finally {
    bare.destroy();
  }
});

gpuTest("qwen3 encoder: bad ids and hidden states are refused by name, before any GPU work", async (gpu) => {
  const { config, store } = await animaTiny();
  await assertThrowsMessage(
    () => Qwen3Encoder.load(gpu, store, config, { hiddenState: 3 }),
    "hiddenState must be an integer in [-3, 2]",
  );
  await assertThrowsMessage(() => Qwen3Encoder.load(gpu, store, config, { hiddenState: -4 }), "got -4");
  await assertThrowsMessage(
    () => Qwen3Encoder.load(gpu, store, config, { format: "q4" as "q8" }),
    "format must be one of f32, q8",
  );
  const encoder = await Qwen3Encoder.load(gpu, store, config);
  try {
    await assertThrowsMessage(() => encoder.encode([1, 128]), "ids[1] = 128 is not a token id in [0, 128)");
    await assertThrowsMessage(() => encoder.encode([-1]), "ids[0] = -1");
    await assertThrowsMessage(() => encoder.encode([]), "at least one token");
    strictEqual(encoder.programBytes, 0, "nothing was built for a refused prompt");
  } finally {
    encoder.destroy();
  }
  await assertThrowsMessage(() => encoder.encode([1]), "used after destroy()");
});
