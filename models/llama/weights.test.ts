import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { SafetensorsFile, type TensorStore } from "../../llm/safetensors.ts";
import { bytesSource } from "../../llm/safetensors_sources.ts";
import { fileSource, openCheckpointDir } from "../../llm/safetensors_file.ts";
import { encodeSafetensors, type TensorData } from "../../llm/safetensors_write.ts";
import { outputSpecs, transformTensor, type WeightFormat } from "../../llm/weights/format.ts";
import { convertedMetadata, type LoadedWeight, quantizeRowsGpu } from "../../llm/weights/load.ts";
import { permuteRopeChannels } from "../../ops/rope/reference.ts";
import { parseLlamaConfig, TINY_CONFIG } from "./config.ts";
import { llamaWeightSpecs, loadWeights } from "./weights.ts";
import { fixturePath } from "./fixtures_test_util.ts";

async function openFixture(path: string): Promise<SafetensorsFile> {
  return SafetensorsFile.open(await fileSource(fixturePath(path)));
}

async function loadDir(dir: string, format?: WeightFormat, deferQuantization?: WeightFormat[]) {
  const config = parseLlamaConfig(await Deno.readTextFile(`${fixturePath(dir)}/config.json`));
  const { store, close } = await openCheckpointDir(fixturePath(dir));
  try {
    return { config, weights: await collect(loadWeights(store, config, { format, deferQuantization })) };
  } finally {
    close();
  }
}

async function collect(it: AsyncIterable<LoadedWeight>): Promise<LoadedWeight[]> {
  const out: LoadedWeight[] = [];
  for await (const w of it) out.push(w);
  return out;
}

/** Every tensor of a checkpoint, in memory, to build altered copies from. */
async function tensorsOf(dir: string): Promise<TensorData[]> {
  const { store, close } = await openCheckpointDir(fixturePath(dir));
  try {
    return await Promise.all(store.tensors.map(async (t) => ({ ...t, data: await store.read(t.name) })));
  } finally {
    close();
  }
}

/** A store over bytes that counts reads after the header's (data reads). */
async function countingStore(bytes: Uint8Array): Promise<{ store: TensorStore; dataReads: () => number }> {
  const source = bytesSource(bytes);
  let reads = 0;
  const store = await SafetensorsFile.open({ ...source, read: (o, l) => (reads++, source.read(o, l)) });
  const headerReads = reads;
  return { store, dataReads: () => reads - headerReads };
}

Deno.test("loadWeights: bf16, f32 and sharded checkpoints of the same weights load to the same bytes in every format", async () => {
  for (const format of ["f32", "q8", "q4g128"] as const) {
    const f32 = await loadDir("tiny-gqa/f32", format);
    const bf16 = await loadDir("tiny-gqa/bf16", format);
    assertEquals(bf16.weights, f32.weights, format);
    const tied = await loadDir("tiny-tied/bf16", format);
    const sharded = await loadDir("tiny-tied/bf16-sharded", format);
    assertEquals(sharded.weights, tied.weights, `${format} sharded`);
    assertEquals(tied.weights.at(-1)?.spec.name, "model.norm.weight");
  }
});

Deno.test("loadWeights: a converted checkpoint loads the same bytes as quantise-on-load, and reports progress", async () => {
  const { config, weights } = await loadDir("tiny-headdim/bf16", "q4g128");
  const converted = encodeSafetensors(weights.flatMap((w) => w.parts), convertedMetadata("q4g128"));
  const store = await SafetensorsFile.open(bytesSource(converted));
  const progress: [number, number][] = [];
  const loaded = await collect(loadWeights(store, config, { onProgress: (d, t) => progress.push([d, t]) }));
  assertEquals(loaded, weights);
  assertEquals(progress.length, weights.length);
  const total = store.tensors.reduce((s, t) => s + t.end - t.begin, 0);
  assert(progress.every(([d, t], i) => t === total && d > (progress[i - 1]?.[0] ?? 0)));
  assertEquals(progress.at(-1)?.[0], total);
  await assertThrowsMessage(
    () => collect(loadWeights(store, config, { format: "q8" })),
    "weights: the checkpoint is converted to q4g128; it cannot be loaded as q8",
  );
  const old = await SafetensorsFile.open(
    bytesSource(encodeSafetensors([], { ...convertedMetadata("q8"), version: "0" })),
  );
  await assertThrowsMessage(() => collect(loadWeights(old, config)), "__metadata__.version must be 1, got 0");
});

Deno.test("loadWeights: a missing, misshapen or unexpected tensor is refused before any data is read", async () => {
  const config = parseLlamaConfig(await Deno.readTextFile(fixturePath("tiny-gqa/bf16/config.json")));
  const tensors = await tensorsOf("tiny-gqa/bf16");
  const cases: [TensorData[], string][] = [
    [
      tensors.filter((t) => t.name !== "model.layers.1.mlp.up_proj.weight"),
      "TensorNotFound: tensor model.layers.1.mlp.up_proj.weight is missing",
    ],
    [
      tensors.map((t) => t.name === "model.norm.weight" ? { ...t, shape: [6, 8] } : t),
      "tensor model.norm.weight is BF16 [6,8], expected F32 or F16 or BF16 [48]",
    ],
    [
      tensors.map((t) => t.name === "lm_head.weight" ? { ...t, dtype: "I16" as const } : t),
      "tensor lm_head.weight is I16 [128,48], expected F32 or F16 or BF16 [128,48]",
    ],
    [
      [...tensors, { name: "model.layers.0.self_attn.q_proj.bias", dtype: "F32", shape: [1], data: new Uint8Array(4) }],
      "unexpected tensor model.layers.0.self_attn.q_proj.bias",
    ],
  ];
  for (const [altered, message] of cases) {
    const { store, dataReads } = await countingStore(encodeSafetensors(altered));
    await assertThrowsMessage(() => collect(loadWeights(store, config)), message);
    assertEquals(dataReads(), 0, message);
  }
  const { store } = await countingStore(encodeSafetensors(tensors));
  // A million layers against a two-layer file: refused at once, not after listing 9 million specs.
  const t0 = performance.now();
  await assertThrowsMessage(
    () => collect(loadWeights(store, { ...config, numHiddenLayers: 1e6 })),
    "the config has 1000000 layers (num_hidden_layers), the checkpoint 2",
  );
  assertEquals(performance.now() - t0 < 1000, true, `took ${performance.now() - t0} ms`);
  const tied = { ...config, tieWordEmbeddings: true };
  await assertThrowsMessage(
    () => collect(loadWeights(store, tied)),
    "unexpected tensor lm_head.weight (tie_word_embeddings is true: the head is the embedding)",
  );
});

Deno.test("loadWeights: a matrix left to the caller's quantizer is refused as the quantizer refuses it", async () => {
  const tensors = await tensorsOf("tiny-gqa/f32");
  const q = tensors.find((t) => t.name === "model.layers.0.self_attn.q_proj.weight")!;
  const values = new Float32Array(q.data.slice().buffer);
  values[100] = NaN;
  q.data = new Uint8Array(values.buffer);
  const store = await SafetensorsFile.open(bytesSource(encodeSafetensors(tensors)));
  const config = parseLlamaConfig(await Deno.readTextFile(fixturePath("tiny-gqa/f32/config.json")));
  const message = "weights: model.layers.0.self_attn.q_proj.weight cannot be stored as q8: quantize: x must be finite";
  await assertThrowsMessage(() => collect(loadWeights(store, config, { format: "q8" })), message);
  await assertThrowsMessage(
    () => collect(loadWeights(store, config, { format: "q8", deferQuantization: ["q8"] })),
    message,
  );
  // Deferred, the matrices come as f32 with Q/K permuted; the norms as they are.
  const clean = await SafetensorsFile.open(bytesSource(encodeSafetensors(await tensorsOf("tiny-gqa/f32"))));
  const deferred = await collect(loadWeights(clean, config, { format: "q8", deferQuantization: ["q8"] }));
  const f32 = await collect(loadWeights(clean, config, { format: "f32" }));
  assertEquals(deferred.map((w) => w.parts), f32.map((w) => w.parts));
  assertEquals(deferred.map((w) => w.format), f32.map((w) => (w.spec.role === "norm" ? "q8" : "f32")));
});

gpuTest(
  "quantizeRowsGpu: quantise-on-load on the GPU writes the converter's q8 and q4g128 bytes, bit for bit",
  async (gpu) => {
    // Each matrix of two tiny checkpoints (K = 48 and 144: q4g128 rows of one group and of a full
    // group plus 16 columns; tiny-headdim's Q/K permuted with head_dim 16), deferred by the loader,
    // quantized on the GPU, against what transformTensor writes (held to numpy's converter below and
    // to its quantiser by llm/weights/format.test.ts). Under a 4 KiB binding limit each matrix is cut
    // into row blocks whose packed form fits (as LlamaEngine cuts them) and the f32 rows of a block go up in pieces of 21 rows or
    // fewer, each quantized at its row offset.
    for (const dir of ["tiny-gqa/bf16", "tiny-headdim/bf16"]) {
      for (const format of ["q8", "q4g128"] as const) {
        const deferred = await loadDir(dir, format, [format]);
        const converted = await loadDir(dir, format);
        for (const device of [gpu, gpu.withLimits({ maxStorageBufferBindingSize: 4096 })]) {
          const limit = device.limits.maxStorageBufferBindingSize;
          let matrices = 0;
          for (const [i, w] of deferred.weights.entries()) {
            const want = converted.weights[i];
            assertEquals(w.spec, want.spec);
            if (w.spec.role === "norm") continue;
            assertEquals(w.format, "f32", w.spec.name);
            const [rows, K] = w.spec.shape;
            const values = new Float32Array(w.parts[0].data.slice().buffer);
            const words = Math.ceil(K / (format === "q8" ? 4 : 8));
            const groups = format === "q8" ? 1 : Math.ceil(K / 128);
            const block = Math.min(rows, Math.floor(limit / (4 * words)));
            const packed: number[] = [];
            const scales: number[] = [];
            for (let row0 = 0; row0 < rows; row0 += block) {
              const n = Math.min(block, rows - row0);
              const weight = device.alloc("u32", n * words, "weight");
              const scaleTensor = device.alloc("f32", n * groups, "scales");
              try {
                const piece = values.subarray(row0 * K, (row0 + n) * K);
                await quantizeRowsGpu(device, format, piece, n, K, weight.buffer, scaleTensor.buffer);
                packed.push(...(await device.read(weight)));
                scales.push(...(await device.read(scaleTensor)));
              } finally {
                weight.buffer.destroy();
                scaleTensor.buffer.destroy();
              }
            }
            const what = `${dir} ${format} ${w.spec.name} (binding limit ${limit})`;
            assertEquals(new Uint8Array(Uint32Array.from(packed).buffer), want.parts[0].data, `${what} weight`);
            assertEquals(new Uint8Array(Float32Array.from(scales).buffer), want.parts[1].data, `${what} scales`);
            matrices++;
          }
          assertEquals(matrices, deferred.weights.filter((w) => w.spec.role !== "norm").length);
        }
      }
    }
  },
);

Deno.test("transformTensor: the tiny checkpoint in q8 and q4g128 is byte for byte what the numpy converter wrote", async () => {
  const input = await openFixture("tiny-gqa/f32/model.safetensors");
  for (const format of ["q8", "q4g128"] as const) {
    const expected = await openFixture(`tiny-gqa/expected-${format}.safetensors`);
    let compared = 0;
    for (const spec of llamaWeightSpecs(TINY_CONFIG)) {
      const parts = transformTensor(spec, await input.readFloat32(spec.name), TINY_CONFIG, format);
      assertEquals(parts.map(({ name, dtype, shape }) => ({ name, dtype, shape })), outputSpecs(spec, format));
      for (const part of parts) {
        const want = expected.info(part.name);
        assertEquals([part.dtype, part.shape], [want.dtype, want.shape], part.name);
        assertEquals(part.data, await expected.read(part.name), `${format} ${part.name}`);
        compared++;
      }
    }
    assertEquals(compared, expected.tensors.length, `${format}: every expected tensor compared`);
  }
});

Deno.test("transformTensor: f32 permutes Q and K only; bad values are refused naming the tensor", async () => {
  const input = await openFixture("tiny-gqa/f32/model.safetensors");
  const specs = llamaWeightSpecs(TINY_CONFIG);
  for (const spec of specs.slice(0, 4)) {
    const values = await input.readFloat32(spec.name);
    const [part] = transformTensor(spec, values, TINY_CONFIG, "f32");
    const heads = spec.role === "q" ? 4 : 2;
    const want = spec.role === "q" || spec.role === "k" ? permuteRopeChannels(values, heads, 12, 48) : values;
    assertEquals(new Float32Array(part.data.slice().buffer), want, spec.name);
  }
  const q = specs[1];
  const bad = new Float32Array(48 * 48);
  bad[100] = NaN;
  await assertThrowsMessage(
    () => transformTensor(q, bad, TINY_CONFIG, "q8"),
    "weights: model.layers.0.self_attn.q_proj.weight cannot be stored as q8: quantize: x must be finite",
  );
  await assertThrowsMessage(
    () => transformTensor(q, new Float32Array(5), TINY_CONFIG, "f32"),
    "weights: model.layers.0.self_attn.q_proj.weight must have 2304 values ([48,48]), got 5",
  );
});

Deno.test("llamaWeightSpecs: HF names and shapes; a tied model has no head", () => {
  const specs = llamaWeightSpecs({ ...TINY_CONFIG, headDim: 16, numKeyValueHeads: 1 });
  assertEquals(specs.length, 1 + 2 * 9 + 2);
  assertEquals(specs.find((s) => s.name === "model.layers.1.self_attn.k_proj.weight")?.shape, [16, 48]);
  assertEquals(specs.find((s) => s.name === "model.layers.1.self_attn.o_proj.weight")?.shape, [48, 64]);
  assertEquals(specs.find((s) => s.name === "model.layers.0.mlp.down_proj.weight")?.shape, [48, 144]);
  assertEquals(specs.at(-1), { name: "lm_head.weight", role: "head", shape: [128, 48] });
  assertEquals(llamaWeightSpecs({ ...TINY_CONFIG, tieWordEmbeddings: true }).at(-1)?.name, "model.norm.weight");
  assertEquals(outputSpecs(specs[0], "q4g128").map((s) => s.shape), [[128, 6], [128, 1]]);
  assertEquals(outputSpecs(specs.find((s) => s.role === "down")!, "q4g128").map((s) => s.shape), [[48, 18], [48, 2]]);
});
