import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { acquireDevice, type ResidentDevice } from "../../harness/device.ts";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { WEIGHT_FORMATS, type WeightFormat } from "../../llm/weights/format.ts";
import { LlamaEngine, type LlamaEngineOptions } from "./engine.ts";
import { LlamaReference } from "./reference.ts";
import { convertCheckpoint } from "./convert.ts";
import { openCheckpointDir } from "../../llm/safetensors_file.ts";
import { SafetensorsFile } from "../../llm/safetensors.ts";
import { bytesSource } from "../../llm/safetensors_sources.ts";
import { encodeSafetensors } from "../../llm/safetensors_write.ts";
import {
  fixturePath,
  fixtureReference,
  maxAbsDiff,
  openFixture,
  type Variant,
  VARIANTS,
} from "./fixtures_test_util.ts";

/**
 * GPU logits agree with transformers' to this absolute difference (logits of order 1-10; the GPU
 * sums in f32 in its own order, transformers in f32 in torch's).
 */
const LOGIT_TOLERANCE = 2e-4; // every variant and format passes at 1e-4 on llvmpipe

async function engineFor(
  gpu: ResidentDevice,
  variant: Variant,
  format: WeightFormat,
  options: LlamaEngineOptions = {},
) {
  const { config, store, close } = await openFixture(variant);
  try {
    // No end-of-sequence id: the fixtures' greedy runs choose id 2 (their EOS) and must go on past it.
    return await LlamaEngine.load(gpu, store, { ...config, eosTokenIds: [] }, { format, maxSeq: 40, ...options });
  } finally {
    close();
  }
}

async function collect(it: AsyncIterable<number>): Promise<number[]> {
  const out: number[] = [];
  for await (const id of it) out.push(id);
  return out;
}

/** Prefill logits, 8 decode steps' logits (each fed the fixture's greedy token) and 32 generated tokens. */
async function checkAgainstFixture(engine: LlamaEngine, variant: Variant, format: WeightFormat) {
  const ref = await fixtureReference(variant, format);
  const V = engine.config.vocabSize;
  engine.reset();
  const diffs = [maxAbsDiff(await engine.forward(ref.prompt), ref.prefillLogits)];
  for (let i = 0; i < 8; i++) {
    diffs.push(maxAbsDiff(await engine.forward([ref.greedy[i]]), ref.decodeLogits.subarray(i * V, (i + 1) * V)));
  }
  assert(Math.max(...diffs) < LOGIT_TOLERANCE, `max |logit diff| per call: ${diffs.map((d) => d.toExponential(2))}`);
  assertEquals(await collect(engine.generate(ref.prompt, { maxTokens: 32 })), ref.greedy);
}

for (const variant of Object.keys(VARIANTS) as Variant[]) {
  gpuTest(
    `engine: ${variant}, every format: logits match transformers, 32 greedy tokens generated on the GPU equal`,
    async (gpu) => {
      for (const format of WEIGHT_FORMATS) {
        const engine = await engineFor(gpu, variant, format);
        try {
          await checkAgainstFixture(engine, variant, format);
        } catch (e) {
          throw new Error(`${format}: ${(e as Error).message}`);
        } finally {
          engine.destroy();
        }
      }
    },
  );
}

gpuTest(
  "engine: weights over a 4 KiB binding limit are split into row blocks; attention split 4 ways, 8 positions a chunk",
  async (gpu) => {
    const small = gpu.withLimits({ maxStorageBufferBindingSize: 4096 });
    for (const format of WEIGHT_FORMATS) {
      // Chunks of 8 positions: the online softmax's running max changes between chunks.
      const engine = await engineFor(small, "tiny-gqa", format, { attentionSplits: 4, attentionChunk: 8 });
      try {
        // The head [128, 48] in f32 is 24 KiB: 6 or more blocks; gate/up [288, 48] is two or more
        // in every format (q4g128: 170 rows, then 118); a chunk is a few rows.
        assert(engine.chunkRows < 8, `chunk rows ${engine.chunkRows}`);
        assert(engine.dispatchesPerToken > 5 * 2 + 4, `dispatches ${engine.dispatchesPerToken}`);
        await checkAgainstFixture(engine, "tiny-gqa", format);
      } catch (e) {
        throw new Error(`${format}: ${(e as Error).message}`);
      } finally {
        engine.destroy();
      }
    }
  },
);

gpuTest("engine: a decode step is 5 dispatches per layer plus gather, final norm, head and sampler", async (gpu) => {
  const engine = await engineFor(gpu, "tiny-gqa", "q8");
  try {
    assertEquals(engine.dispatchesPerToken, 5 * 2 + 4);
  } finally {
    engine.destroy();
  }
});

gpuTest(
  "engine: generation stops at an end-of-sequence id and yields nothing after it, whatever the readback grouping",
  async (gpu) => {
    const ref = await fixtureReference("tiny-gqa", "f32");
    const { config, store, close } = await openFixture("tiny-gqa");
    // The fixture's 5th greedy token declared an EOS id: generation must end right after it.
    const eos = ref.greedy[4];
    const engine = await LlamaEngine.load(gpu, store, { ...config, eosTokenIds: [eos] }, { maxSeq: 48 }).finally(close);
    try {
      const first = ref.greedy.indexOf(eos);
      for (const readEvery of [1, 3, 16]) {
        const got = await collect(engine.generate(ref.prompt, { maxTokens: 32, readEvery, inFlight: 2 }));
        assertEquals(got, ref.greedy.slice(0, first + 1), `readEvery ${readEvery}`);
      }
    } finally {
      engine.destroy();
    }
  },
);

gpuTest("engine: bad input is refused by name before any GPU work", async (gpu) => {
  const engine = await engineFor(gpu, "tiny-gqa", "f32", { maxSeq: 16 });
  try {
    await assertThrowsMessage(() => engine.forward([1, 128]), /ids\[1\] = 128 is not a token id in \[0, 128\)/);
    await assertThrowsMessage(() => engine.forward(new Array(17).fill(3)), /exceed maxSeq 16/);
    const gen = (prompt: number[], options: Parameters<LlamaEngine["generate"]>[1]) =>
      collect(engine.generate(prompt, options));
    await assertThrowsMessage(() => gen([3, 4], { maxTokens: 16 }), /need 17 positions, over maxSeq 16/);
    await assertThrowsMessage(() => gen([3, -1], { maxTokens: 2 }), /ids\[1\] = -1/);
    await assertThrowsMessage(() => gen([], { maxTokens: 2 }), /at least one token/);
    await assertThrowsMessage(
      () => gen([3], { maxTokens: 2, sampler: { mode: "topk" } as unknown as { mode: "greedy" } }),
      /LlamaEngine.generate: sampler mode must be "greedy" or "sample", got "topk"/,
    );
    await assertThrowsMessage(
      () => gen([3], { maxTokens: 2, sampler: { mode: "sample", temperature: 1, topP: 1.5, seed: 0 } }),
      /LlamaEngine.generate: sampler topP must be in \(0, 1\], got 1.5/,
    );
    await assertThrowsMessage(
      () => gen([3], { maxTokens: 2, sampler: { mode: "sample", temperature: 1e-50, seed: 0 } }),
      /LlamaEngine.generate: sampler temperature must be finite and > 0 in f32, got 1e-50/,
    );
    const live = gpu.memory;
    await assertThrowsMessage(
      () => gen([3], { maxTokens: 2, readEvery: 0 }),
      /^LlamaEngine.generate: readEvery must be an integer >= 1, got 0$/,
    );
    await assertThrowsMessage(
      () => gen([3], { maxTokens: 2, inFlight: 2.5 }),
      /^LlamaEngine.generate: inFlight must be an integer >= 1, got 2.5$/,
    );
    assertEquals([gpu.memory.bytes, gpu.memory.buffers], [live.bytes, live.buffers], "nothing made on the device");
    assertEquals(engine.length, 0);
  } finally {
    engine.destroy();
  }
  const { config, store, close } = await openFixture("tiny-gqa");
  try {
    await assertThrowsMessage(
      () => LlamaEngine.load(gpu.withLimits({ maxStorageBufferBindingSize: 1024 }), store, config, { maxSeq: 48 }),
      /KV cache for maxSeq 48 is 4608 bytes, over maxStorageBufferBindingSize 1024/,
    );
    await assertThrowsMessage(
      () => LlamaEngine.load(gpu, store, config, { maxSeq: 48, attentionSplits: 129 }),
      /attentionSplits must be an integer in \[1, 128\], got 129/,
    );
  } finally {
    close();
  }
});

gpuTest("engine: an aborted signal ends generation with its reason", async (gpu) => {
  const engine = await engineFor(gpu, "tiny-gqa", "q4g128");
  try {
    const controller = new AbortController();
    const got: number[] = [];
    await assertThrowsMessage(async () => {
      for await (const id of engine.generate([5, 6, 7], { maxTokens: 20, signal: controller.signal })) {
        got.push(id);
        if (got.length === 3) controller.abort(new Error("stopped by the caller"));
      }
    }, /stopped by the caller/);
    assertEquals(got.length, 3);
  } finally {
    engine.destroy();
  }
});

gpuTest(
  "engine: 1,030 positions (prefill in chunks of 512, attention past one 1,024-position chunk) match the reference",
  async (gpu) => {
    const { config, store, close } = await openFixture("tiny-gqa");
    const reference = await LlamaReference.load(store, config, "q8").finally(close);
    // The last six positions repeat the token fed after them, so the largest scores of the last rows
    // tend to fall past position 1,024: the running max then changes between chunks.
    const prompt = Array.from({ length: 1030 }, (_, i) => i >= 1024 ? 5 : (i * 37 + 11) % 125 + 3);
    const V = config.vocabSize;
    const want = [reference.forward(prompt).subarray(1027 * V)];
    for (const id of [5, 5]) want.push(reference.forward([id]));
    for (const attentionSplits of [1, 7]) {
      const engine = await engineFor(gpu, "tiny-gqa", "q8", { maxSeq: 1040, attentionSplits });
      try {
        const got = [(await engine.forward(prompt)).subarray(1027 * V)];
        for (const id of [5, 5]) got.push(await engine.forward([id]));
        const diffs = got.map((g, i) => maxAbsDiff(g, want[i]));
        assert(
          Math.max(...diffs) < LOGIT_TOLERANCE,
          `splits ${attentionSplits}: ${diffs.map((d) => d.toExponential(2))}`,
        );
      } finally {
        engine.destroy();
      }
    }
  },
);

gpuTest(
  "engine: dynamic RoPE (frequencies of each call's length) matches the reference, in forward and in generate",
  async (gpu) => {
    const { config: base, store, close } = await openFixture("tiny-gqa");
    const config = {
      ...base,
      eosTokenIds: [],
      maxPositionEmbeddings: 12,
      ropeScaling: { ropeType: "dynamic" as const, factor: 4, originalMaxPositionEmbeddings: 12 },
    };
    try {
      const reference = await LlamaReference.load(store, config, "f32");
      const engine = await LlamaEngine.load(gpu, store, config, { maxSeq: 40, prefillChunk: 8 });
      try {
        // A 20-token prompt (past the original 12) in chunks of 8, then decode steps: every call's
        // frequencies differ.
        const prompt = Array.from({ length: 20 }, (_, i) => (i * 13 + 7) % 120 + 3);
        const V = config.vocabSize;
        const want = reference.forward(prompt).subarray(19 * V);
        const got = (await engine.forward(prompt)).subarray(19 * V);
        assert(maxAbsDiff(got, want) < LOGIT_TOLERANCE, `prefill: ${maxAbsDiff(got, want)}`);
        for (const id of [4, 50]) {
          const d = maxAbsDiff(await engine.forward([id]), reference.forward([id]));
          assert(d < LOGIT_TOLERANCE, `decode ${id}: ${d}`);
        }
        assertEquals(await collect(engine.generate(prompt, { maxTokens: 12 })), reference.greedy(prompt, 12));
      } finally {
        engine.destroy();
      }
    } finally {
      close();
    }
  },
);

gpuTest("engine: loading reports progress up to every byte of the checkpoint", async (gpu) => {
  const { config, store, close } = await openFixture("tiny-tied");
  const seen: [number, number][] = [];
  const engine = await LlamaEngine.load(gpu, store, config, {
    format: "q4g128",
    maxSeq: 16,
    onProgress: (done, total) => seen.push([done, total]),
  }).finally(close);
  try {
    const total = store.tensors.reduce((s, t) => s + (t.end - t.begin), 0);
    assert(seen.length > 10, `${seen.length} progress calls`);
    assert(seen.every(([d, t], i) => t === total && d <= t && (i === 0 || d >= seen[i - 1][0])));
    assertEquals(seen[seen.length - 1], [total, total]);
  } finally {
    engine.destroy();
  }
});

gpuTest(
  "engine: a destroyed engine refuses calls by name, before any GPU work; a lost device fails at once",
  async (gpu) => {
    const engine = await engineFor(gpu, "tiny-gqa", "f32");
    engine.destroy();
    await assertThrowsMessage(
      () => collect(engine.generate([5, 6, 7], { maxTokens: 4 })),
      "LlamaEngine.generate: the engine was destroyed",
    );
    await assertThrowsMessage(() => engine.forward([5, 6, 7]), "LlamaEngine.forward: the engine was destroyed");
    // A device of its own, destroyed while an engine holds it.
    const own = await acquireDevice();
    const orphan = await engineFor(own, "tiny-gqa", "q8");
    own.destroy();
    await assertThrowsMessage(() => collect(orphan.generate([5, 6, 7], { maxTokens: 4 })), "device lost");
    await assertThrowsMessage(() => orphan.forward([5]), "device lost");
  },
);

gpuTest(
  "engine: q8 and q4g128 quantized on the GPU as they load give the logits of the converter's bytes, bit for bit",
  async (gpu) => {
    // The HF checkpoint quantized on load (ops/quantize's `packed` and `packed_q4` kernels), against
    // the checkpoint `deno task convert` writes (quantized on the host; its bytes equal numpy's,
    // convert.test.ts): the same bytes give the same logits exactly, and a code or scale off by one
    // would not. Also under a 4 KiB binding limit, where the f32 rows are quantized in pieces at
    // row offsets.
    const { config } = await openFixture("tiny-gqa");
    for (const format of ["q8", "q4g128"] as const) {
      const dir = await Deno.makeTempDir();
      try {
        await convertCheckpoint(fixturePath("tiny-gqa/bf16"), dir, format);
        const { store, close } = await openCheckpointDir(dir);
        for (const device of [gpu, gpu.withLimits({ maxStorageBufferBindingSize: 4096 })]) {
          const onLoad = await engineFor(device, "tiny-gqa", format);
          const converted = await LlamaEngine.load(device, store, config, { format, maxSeq: 40 });
          try {
            const prompt = [5, 6, 7, 8, 9, 10, 11, 12];
            assertEquals(await onLoad.forward(prompt), await converted.forward(prompt), `${format}`);
          } finally {
            onLoad.destroy();
            converted.destroy();
          }
        }
        close();
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    }
  },
);

gpuTest(
  "engine: calls do not interleave; destroy during a generation ends it by name; a destroyed engine refuses",
  async (gpu) => {
    const engine = await engineFor(gpu, "tiny-gqa", "q8");
    const first = engine.generate([5, 6, 7], { maxTokens: 12 });
    assertEquals(typeof (await first.next()).value, "number"); // the first generation is running
    const live = gpu.memory;
    await assertThrowsMessage(
      () => collect(engine.generate([5], { maxTokens: 2 })),
      "LlamaEngine.generate: generate() is running on this engine",
    );
    // A refused call makes nothing on the device (no readback ring left behind).
    assertEquals([gpu.memory.bytes, gpu.memory.buffers], [live.bytes, live.buffers]);
    await assertThrowsMessage(() => engine.forward([5]), "LlamaEngine.forward: generate() is running on this engine");
    engine.destroy(); // while the generation is suspended: its buffers stay until it ends
    await assertThrowsMessage(() => first.next(), "LlamaEngine.generate: the engine was destroyed during the call");
    assertEquals(engine.residentBytes, 0, "freed once the generation ended");
    const freed = gpu.memory;
    await assertThrowsMessage(() => collect(engine.generate([5], { maxTokens: 2 })), "the engine was destroyed");
    assertEquals([gpu.memory.bytes, gpu.memory.buffers], [freed.bytes, freed.buffers]);
    await assertThrowsMessage(() => engine.forward([5]), "LlamaEngine.forward: the engine was destroyed");
    engine.destroy(); // twice is harmless
    // After a generation ends, the next call runs.
    const again = await engineFor(gpu, "tiny-gqa", "f32");
    try {
      assertEquals((await collect(again.generate([5, 6], { maxTokens: 3 }))).length, 3);
      assertEquals((await again.forward([5])).length, again.config.vocabSize);
    } finally {
      again.destroy();
    }
  },
);

gpuTest("engine: NaN weights end generation with an error naming the token, greedy and sampled", async (gpu) => {
  const { config, store, close } = await openFixture("tiny-gqa");
  try {
    const tensors = await Promise.all(store.tensors.map(async (t) => {
      let data = await store.read(t.name);
      if (t.name === "model.norm.weight") {
        const values = new Float32Array(data.slice().buffer);
        values[3] = NaN;
        data = new Uint8Array(values.buffer);
      }
      return { name: t.name, dtype: t.dtype, shape: t.shape, data };
    }));
    const poisoned = await SafetensorsFile.open(bytesSource(encodeSafetensors(tensors), "nan.safetensors"));
    const engine = await LlamaEngine.load(gpu, poisoned, { ...config, eosTokenIds: [] }, { maxSeq: 16 });
    try {
      for (const sampler of [{ mode: "greedy" }, { mode: "sample", temperature: 1, seed: 1 }] as const) {
        await assertThrowsMessage(
          () => collect(engine.generate([5, 6, 7], { maxTokens: 4, sampler })),
          "LlamaEngine.generate: token 0 (the logits of position 2): the logits hold NaN",
        );
      }
    } finally {
      engine.destroy();
    }
  } finally {
    close();
  }
});

gpuTest("engine: a prefillChunk that is not an integer >= 1 is refused at load", async (gpu) => {
  for (const prefillChunk of [2.5, 0, -1, NaN]) {
    await assertThrowsMessage(
      () => engineFor(gpu, "tiny-gqa", "f32", { prefillChunk }),
      `LlamaEngine: prefillChunk must be an integer >= 1, got ${prefillChunk}`,
    );
  }
});

gpuTest(
  "engine: after its device is lost, rebind loads the same weights on a new device and generates the same tokens",
  async (gpu) => {
    const { config, store, close } = await openFixture("tiny-gqa");
    try {
      const lostDevice = await acquireDevice();
      const engine = await LlamaEngine.load(lostDevice, store, { ...config, eosTokenIds: [] }, {
        format: "q8",
        maxSeq: 24,
      });
      const before = await collect(engine.generate([5, 6, 7], { maxTokens: 8 }));
      lostDevice.destroy();
      await assertThrowsMessage(() => collect(engine.generate([5, 6, 7], { maxTokens: 8 })), /^device lost: destroyed/);
      const progress: number[] = [];
      const again = await engine.rebind(gpu, { onProgress: (done) => progress.push(done) });
      try {
        assertEquals(again.format, "q8");
        assertEquals(again.maxSeq, 24);
        assert(progress.length > 0, "rebind reports progress");
        assertEquals(await collect(again.generate([5, 6, 7], { maxTokens: 8 })), before);
        await assertThrowsMessage(() => engine.forward([5]), "LlamaEngine.forward: the engine was destroyed");
      } finally {
        again.destroy();
      }
    } finally {
      close();
    }
  },
);

gpuTest(
  "engine: the programs kept are bounded (the least recently used go), and a rebuilt one gives the same ids",
  async (gpu) => {
    const engine = await engineFor(gpu, "tiny-gqa", "q8", { maxSeq: 64, prefillChunk: 64 });
    try {
      // A prompt of n ids is one prefill chunk of n rows: a program per prompt length.
      const run = (n: number) =>
        collect(engine.generate(Array.from({ length: n }, (_, i) => 3 + (i % 7)), { maxTokens: 3 }));
      const first = await run(2);
      // Past the cap, each new length evicts one, so the live buffers stop growing.
      for (let n = 3; n <= 40; n++) await run(n);
      const atCap = gpu.memory.buffers;
      for (let n = 41; n <= 48; n++) await run(n);
      assertEquals(gpu.memory.buffers, atCap, "eight more lengths past the cap keep as many buffers");
      // Length 2's program was evicted long ago: rebuilt, it gives the same ids.
      assertEquals(await run(2), first);
    } finally {
      engine.destroy();
    }
  },
);

gpuTest(
  "engine: load and generate name what is not a store, a config, ids or options, and refuse a misspelt option",
  async (gpu) => {
    const { config, store, close } = await openFixture("tiny-gqa");
    try {
      await assertThrowsMessage(
        () => LlamaEngine.load(gpu, undefined as never, config),
        "LlamaEngine.load: store must be a TensorStore",
      );
      await assertThrowsMessage(
        () => LlamaEngine.load(gpu, store, {} as never),
        "LlamaEngine.load: config must be a LlamaConfig",
      );
      await assertThrowsMessage(
        () => LlamaEngine.load(gpu, store, config, { maxseq: 8 } as never),
        `LlamaEngine.load: unknown option "maxseq" (expected format, maxSeq,`,
      );
      await assertThrowsMessage(
        () => LlamaEngine.load(gpu, store, config, 42 as never),
        "LlamaEngine.load: options must be an object",
      );
      const engine = await LlamaEngine.load(gpu, store, config, { maxSeq: 16 });
      try {
        await assertThrowsMessage(
          () => collect(engine.generate(undefined as never, { maxTokens: 2 })),
          "LlamaEngine.generate: promptIds must be an array of token ids, got undefined",
        );
        await assertThrowsMessage(
          () => collect(engine.generate([5], undefined as never)),
          "LlamaEngine.generate: options must be an object with maxTokens, got undefined",
        );
        await assertThrowsMessage(
          () => collect(engine.generate([5], { maxTokens: 2, maxtokens: 3 } as never)),
          `LlamaEngine.generate: unknown option "maxtokens" (expected maxTokens, sampler,`,
        );
        assertEquals((await collect(engine.generate([5, 6], { maxTokens: 2 }))).length, 2);
      } finally {
        engine.destroy();
      }
    } finally {
      close();
    }
  },
);
