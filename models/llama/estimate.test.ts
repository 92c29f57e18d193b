// The resident estimate against what a load really holds, and the checks made from it (and from the
// format) before a load reads or allocates anything.
import { ok, strictEqual } from "node:assert/strict";
import type { ResidentDevice } from "../../harness/device.ts";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { planLoad } from "./weights.ts";
import type { WeightFormat } from "../../llm/weights/format.ts";
import { LlamaEngine, type PrefillActivations } from "./engine.ts";
import { estimateResidentBytes } from "./estimate.ts";
import { TINY_CONFIG } from "./config.ts";
import { openFixture, type Variant } from "./fixtures_test_util.ts";

/** A store that counts the tensor data read from it. */
function counting(store: TensorStore): { store: TensorStore; reads: () => number } {
  let reads = 0;
  const wrapped = Object.create(store) as TensorStore;
  wrapped.read = (name: string) => (reads++, store.read(name));
  wrapped.readFloat32 = (name: string) => (reads++, store.readFloat32(name));
  return { store: wrapped, reads: () => reads };
}

const CASES: [Variant, WeightFormat, number | undefined, PrefillActivations?][] = [
  ["tiny-gqa", "f32", undefined],
  ["tiny-gqa", "q8", undefined],
  ["tiny-gqa", "q4g128", undefined],
  ["tiny-tied", "q8", undefined], // a tied head: counted once
  // A binding limit that cuts the embedding and the projections into several blocks each.
  ["tiny-gqa", "f32", 2048],
  ["tiny-gqa", "q4g128", 2048],
  // int8 prefill: the quantised input and its scales
  ["tiny-gqa", "q8", undefined, "int8"],
  ["tiny-gqa", "q4g128", 2048, "int8"],
];

gpuTest("estimate: the weights and KV cache a load holds exactly, and at least all it allocates", async (gpu) => {
  for (const [variant, format, binding, prefillActivations] of CASES) {
    const { config, store, close } = await openFixture(variant);
    const device: ResidentDevice = binding ? gpu.withLimits({ maxStorageBufferBindingSize: binding }) : gpu;
    const maxSeq = binding ? 16 : 48; // a layer's cache within the lowered binding
    const engine = await LlamaEngine.load(device, store, config, { format, maxSeq, prefillActivations });
    close();
    try {
      const label = `${variant} ${format}${binding ? ` binding ${binding}` : ""} ${prefillActivations ?? "f32"}`;
      const { weights, kvCache, activations, total } = engine.estimate;
      strictEqual(weights, engine.weightBytes, `${label}: weights`);
      strictEqual(total, weights + kvCache + activations);
      const cache = 2 * config.numHiddenLayers * config.numKeyValueHeads * maxSeq * config.headDim * 4;
      strictEqual(kvCache, cache, `${label}: KV cache`);
      // Every buffer of the load: the estimate is an upper bound, and a close one (its activations
      // take all of gate/up's columns and one argmax pair per token where the engine takes fewer).
      const held = engine.residentBytes;
      ok(total >= held, `${label}: estimate ${total} < held ${held}`);
      ok(total - held <= 0.25 * (held - weights - kvCache) + 4096, `${label}: estimate ${total}, held ${held}`);
    } finally {
      engine.destroy();
    }
  }
});

gpuTest("maxResidentBytes: a load over it is refused before any tensor is read, naming the bytes", async (gpu) => {
  const { config, store, close } = await openFixture("tiny-gqa");
  try {
    const fits = await LlamaEngine.load(gpu, store, config, { format: "q8", maxSeq: 48 });
    const { total, weights, kvCache, activations } = fits.estimate;
    fits.destroy();
    const counted = counting(store);
    await assertThrowsMessage(
      () => LlamaEngine.load(gpu, counted.store, config, { format: "q8", maxSeq: 48, maxResidentBytes: total - 1 }),
      `LlamaEngine: the engine needs ${total} bytes (weights ${weights}, KV cache ${kvCache}, activations ${activations}), over maxResidentBytes ${
        total - 1
      }`,
    );
    strictEqual(counted.reads(), 0, "no tensor read");
    // A longer cache is what pushes it over: the check sees maxSeq too.
    const exact = await LlamaEngine.load(gpu, store, config, { format: "q8", maxSeq: 48, maxResidentBytes: total });
    exact.destroy();
    await assertThrowsMessage(
      () => LlamaEngine.load(gpu, counted.store, config, { format: "q8", maxSeq: 96, maxResidentBytes: total }),
      /^LlamaEngine: the engine needs \d+ bytes .* over maxResidentBytes/,
    );
    for (const bad of [0, -1, NaN, "1e9"]) {
      await assertThrowsMessage(
        () => LlamaEngine.load(gpu, store, config, { maxResidentBytes: bad as number }),
        `LlamaEngine: maxResidentBytes must be a number > 0, got ${bad}`,
      );
    }
    strictEqual(counted.reads(), 0, "no tensor read");
  } finally {
    close();
  }
});

gpuTest('an unknown weight format ("q3") is refused by name at load, never a WGSL error later', async (gpu) => {
  const { config, store, close } = await openFixture("tiny-gqa");
  try {
    const message = (where: string) => `${where}: format must be one of "f32", "q8", "q4g128", got "q3"`;
    await assertThrowsMessage(
      () => LlamaEngine.load(gpu, store, config, { format: "q3" as WeightFormat }),
      message("LlamaEngine.load"),
    );
    await assertThrowsMessage(
      () => LlamaEngine.fromWeights(gpu, config, [], { format: "q3" as WeightFormat }),
      message("LlamaEngine"),
    );
    await assertThrowsMessage(() => planLoad(store, config, "q3" as WeightFormat), message("weights"));
  } finally {
    close();
  }
});

Deno.test("estimate: int8 prefill adds a chunk of the widest input as int8 codes and a scale per row", () => {
  const sizes = { maxSeq: 64, chunkRows: 24, logitRows: 8, attentionSplits: 2, bindingLimit: 1 << 20 };
  const c = TINY_CONFIG;
  const f32 = estimateResidentBytes(c, "q8", sizes);
  const int8 = estimateResidentBytes(c, "q8", { ...sizes, prefillActivations: "int8" });
  const widest = Math.max(c.hiddenSize, c.numAttentionHeads * c.headDim, c.intermediateSize);
  const padded = (bytes: number) => Math.ceil(bytes / 16) * 16;
  strictEqual(int8.activations - f32.activations, padded(24 * widest) + padded(4 * 24));
  strictEqual(int8.weights, f32.weights);
});
