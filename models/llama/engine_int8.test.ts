// The engine's prefill on int8 activations (`prefillActivations: "int8"`: ops/quantize's per-row
// quantisation, then ops/matmul's dp4a GEMMs) against the reference with its `linearInput` hook
// quantising every quantised product's input per token row, as the kernels do.
import { deepStrictEqual as assertEquals, ok as assert, strictEqual } from "node:assert/strict";
import type { ResidentDevice } from "../../harness/device.ts";
import { hasDp4a } from "../../harness/roofline.ts";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import type { WeightFormat } from "../../llm/weights/format.ts";
import { quantize } from "../../ops/quantize/reference.ts";
import { LlamaEngine, type LlamaEngineOptions } from "./engine.ts";
import { dequantizeWeight, LlamaReference } from "./reference.ts";
import { loadWeights } from "./weights.ts";
import { maxAbsDiff, openFixture, type Variant, VARIANTS } from "./fixtures_test_util.ts";

/**
 * Engine logits with int8 prefill agree with the hooked reference to this absolute difference. The
 * kernels' integer sums are exact, so what remains is f32 against the reference's f64: the scales
 * applied in f32 and every other op in f32: the f32-activation engine's tolerance against
 * transformers (engine.test.ts). Measured on llvmpipe: at most 1.1e-5 (tiny-tied q8, logits up to
 * 31). The option's own effect on such logits is 0.07-0.65 (models/fortune/dp4a-accuracy.json).
 */
const INT8_TOLERANCE = 2e-4;

/**
 * An input within this many code units of a rounding tie (x * 127 / absmax at k + 0.5) rounds to
 * either neighbour depending on its last f32 bits, which the engine's f32 and the reference's f64
 * do not share (the fixtures' bf16 embeddings put layer 0's normalised inputs on ties: one such
 * code the other way moved tiny-tied's logits by 0.32). The reference is run under every way of
 * rounding the near-tie inputs it meets, and the engine must agree with one of them.
 */
const NEAR_TIE = 1e-4;

/** At most this many near-tie inputs per check (2^n reference runs). */
const MAX_NEAR_TIES = 10;

const QUANTISED: ("q8" | "q4g128")[] = ["q8", "q4g128"];

/** Which products the reference reads int8 inputs for: all quantised ones, all but the head, none. */
type Int8Mode = "all" | "layers" | "none";

/**
 * The reference's int8 hook: each quantised product's input row quantised per row (ops/quantize's
 * reference) and dequantised, as the dp4a kernels read it. Inputs near a rounding tie are recorded
 * in `seen` (as `input@row:column`, rows counted per product since `begin`), and those in `flips`
 * take the other neighbouring code. The engine quantises an input once for the products that read
 * it (q/k/v, gate/up), so those products share the input's name here and decide a tie together.
 */
class Int8Hook {
  mode: Int8Mode = "none";
  flips = new Set<string>();
  seen: string[] = [];
  #rows = new Map<string, number>();
  constructor(readonly quantised: Set<string>, readonly head: string) {}

  begin(mode: Int8Mode, flips: Set<string> = new Set()): void {
    this.mode = mode;
    this.flips = flips;
    this.seen = [];
    this.#rows.clear();
  }

  input = (name: string, x: Float64Array): Float64Array => {
    const m = this.mode;
    if (!this.quantised.has(name) || m === "none" || (m === "layers" && name === this.head)) return x;
    const row = this.#rows.get(name) ?? 0;
    this.#rows.set(name, row + 1);
    const f = Float32Array.from(x);
    const { codes, scales } = quantize({ x: f, rows: 1, cols: f.length });
    const absmax = f.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
    for (const [k, v] of f.entries()) {
      const q = (v * 127) / absmax;
      if (Math.abs(q - Math.floor(q) - 0.5) >= NEAR_TIE) continue;
      const key = `${name.replace(/(q|k|v)_proj/, "qkv").replace(/(gate|up)_proj/, "gate_up")}@${row}:${k}`;
      if (!this.seen.includes(key)) this.seen.push(key);
      if (this.flips.has(key)) codes[k] = codes[k] === Math.floor(q) ? Math.ceil(q) : Math.floor(q);
    }
    return Float64Array.from(codes, (c) => c * scales[0]);
  };
}

/** The reference in `format` whose quantised products read their inputs through an {@link Int8Hook}. */
async function hookedReference(
  store: TensorStore,
  config: LlamaEngine["config"],
  format: WeightFormat,
): Promise<{ reference: LlamaReference; hook: Int8Hook }> {
  const weights = new Map<string, Float64Array>();
  const quantised = new Set<string>();
  for await (const w of loadWeights(store, config, { format })) {
    weights.set(w.spec.name, dequantizeWeight(w));
    if (w.parts.length > 1) quantised.add(w.spec.name); // codes and scales
  }
  const head = config.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight";
  assert(quantised.has(head) && quantised.has("model.layers.0.mlp.down_proj.weight"), `${format}: quantised`);
  const hook = new Int8Hook(quantised, head);
  return { reference: new LlamaReference(config, weights, { linearInput: hook.input }), hook };
}

async function setup(gpu: ResidentDevice, variant: Variant, format: WeightFormat, options: LlamaEngineOptions) {
  const { config, store, close } = await openFixture(variant);
  try {
    const cfg = { ...config, eosTokenIds: [] }; // the greedy runs go on past the fixtures' EOS id
    const { reference, hook } = await hookedReference(store, cfg, format);
    const engine = await LlamaEngine.load(gpu, store, cfg, { format, maxSeq: 40, ...options });
    return { engine, reference, hook };
  } finally {
    close();
  }
}

/**
 * A prompt of 11 ids (prefill over several chunks) whose greedy continuation in every fixture and
 * quantised format has margins over 2e-2 for at least 13 steps (the fixtures' models are random, and
 * many prompts have a near tie within a few steps).
 */
const PROMPT = [76, 82, 117, 116, 31, 87, 15, 105, 42, 39, 88];

async function collect(it: AsyncIterable<number>): Promise<number[]> {
  const out: number[] = [];
  for await (const id of it) out.push(id);
  return out;
}

/** Decode steps fed after the prompt. */
const DECODE = [4, 9, 2];

/** The reference's prompt logits (int8 as `mode` says, near ties rounded as `flips` says), then its decode steps' (f32). */
function referenceRun(reference: LlamaReference, hook: Int8Hook, mode: Int8Mode, flips?: Set<string>): Float32Array[] {
  reference.reset();
  hook.begin(mode, flips);
  const out = [reference.forward(PROMPT)];
  const seen = hook.seen;
  hook.begin("none");
  hook.seen = seen;
  for (const id of DECODE) out.push(reference.forward([id]));
  return out;
}

/**
 * The engine's logits with int8 prefill against the hooked reference: `forward` of the prompt (its
 * chunks of `logitRows` rows, each of more than one row: the head on int8 too), then decode steps
 * (f32 activations), under the rounding of the near-tie inputs that agrees best. Then `generate`'s greedy ids against the reference's under that
 * rounding (prefill int8 but for the last row's head, decode f32), as far as every choice's margin
 * is over four times the tolerance.
 */
async function checkInt8(engine: LlamaEngine, reference: LlamaReference, hook: Int8Hook) {
  const V = engine.config.vocabSize;
  assert(PROMPT.length % engine.logitRows !== 1, "every forward chunk of the prompt has more than one row");
  engine.reset();
  const got = [await engine.forward(PROMPT)];
  for (const id of DECODE) got.push(await engine.forward([id]));
  referenceRun(reference, hook, "all");
  const ties = [...hook.seen];
  assert(ties.length <= MAX_NEAR_TIES, `${ties.length} inputs near a rounding tie: ${ties}`);
  let best = { worst: Infinity, diffs: [] as number[], flips: new Set<string>() };
  for (let subset = 0; subset < 2 ** ties.length; subset++) {
    const flips = new Set(ties.filter((_, i) => (subset >> i) & 1));
    const want = referenceRun(reference, hook, "all", flips);
    const diffs = got.map((g, i) => maxAbsDiff(g, want[i]));
    const worst = Math.max(...diffs);
    if (worst < best.worst) best = { worst, diffs, flips };
  }
  const report = `${best.diffs.map((d) => d.toExponential(2))} (near ties ${ties}, flipped ${[...best.flips]})`;
  assert(best.worst < INT8_TOLERANCE, `max |logit diff| per call: ${report}`);

  // The reference's greedy run as generate computes it, and how far its margins allow a comparison.
  reference.reset();
  hook.begin("layers", best.flips);
  let logits = reference.forward(PROMPT).subarray((PROMPT.length - 1) * V);
  hook.begin("none");
  const want: number[] = [];
  for (let step = 0; step < 16; step++) {
    const sorted = [...logits].sort((a, b) => b - a);
    if (sorted[0] - sorted[1] < 4 * INT8_TOLERANCE) break;
    const id = logits.indexOf(sorted[0]);
    want.push(id);
    logits = reference.forward([id]);
  }
  assert(want.length >= 8, `the margins allow only ${want.length} greedy steps`);
  const ids = await collect(engine.generate(PROMPT, { maxTokens: 16 }));
  assertEquals(ids.slice(0, want.length), want);
}

for (const variant of Object.keys(VARIANTS) as Variant[]) {
  gpuTest(
    `int8 prefill: ${variant}, q8 and q4g128: logits match the reference on int8 inputs, greedy ids equal`,
    async (gpu) => {
      for (const format of QUANTISED) {
        // Chunks of 4 prefill rows: generate's prefill runs 3 chunks, the last of 3 rows.
        const { engine, reference, hook } = await setup(gpu, variant, format, {
          prefillActivations: "int8",
          prefillChunk: 4,
        });
        try {
          strictEqual(engine.prefillActivations, "int8");
          await checkInt8(engine, reference, hook);
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
  "int8 prefill: weights over a 4 KiB binding limit (row blocks, gate/up in pieces) give the same agreement",
  async (gpu) => {
    const small = gpu.withLimits({ maxStorageBufferBindingSize: 4096 });
    for (const format of QUANTISED) {
      const options = { prefillActivations: "int8" } as const;
      const { engine, reference, hook } = await setup(small, "tiny-gqa", format, options);
      try {
        assert(engine.chunkRows > 1 && engine.chunkRows < 8, `chunk rows ${engine.chunkRows}`);
        await checkInt8(engine, reference, hook);
      } catch (e) {
        throw new Error(`${format}: ${(e as Error).message}`);
      } finally {
        engine.destroy();
      }
    }
  },
);

gpuTest("int8 prefill: the option changes the logits (tiny-tied, q8) by far more than the tolerance", async (gpu) => {
  const { config, store, close } = await openFixture("tiny-tied");
  try {
    const logits: Float32Array[] = [];
    for (const prefillActivations of ["f32", "int8"] as const) {
      const engine = await LlamaEngine.load(gpu, store, config, { format: "q8", maxSeq: 40, prefillActivations });
      try {
        logits.push(await engine.forward(PROMPT.slice(0, 8)));
      } finally {
        engine.destroy();
      }
    }
    const d = maxAbsDiff(logits[0], logits[1]);
    assert(d > 100 * INT8_TOLERANCE, `int8 against f32 activations: max |logit diff| ${d}`);
  } finally {
    close();
  }
});

gpuTest(
  "int8 prefill: 4 more dispatches per prefill layer, each quantising a product's input once (gate/up's pieces share one)",
  async (gpu) => {
    // The engine's profile lists a call's dispatches; it needs timestamp queries (the software adapter has them).
    assert(gpu.device.features.has("timestamp-query"), "this test lists dispatches through timestamp queries");
    const { config, store, close } = await openFixture("tiny-gqa");
    try {
      const labels: string[][] = [];
      for (const prefillActivations of ["f32", "int8"] as const) {
        const engine = await LlamaEngine.load(gpu, store, config, { format: "q8", maxSeq: 40, prefillActivations });
        try {
          labels.push((await engine.profile(6))!.map((d) => d.kernel));
        } finally {
          engine.destroy();
        }
      }
      const [f32, int8] = labels;
      const layers = config.numHiddenLayers;
      const quantize = int8.filter((k) => k.startsWith("quantize/"));
      strictEqual(quantize.length, 4 * layers, int8.join("\n"));
      strictEqual(int8.length, f32.length + 4 * layers);
      // Gate/up's two pieces share one quantisation of xn.
      strictEqual(quantize.filter((k) => k.endsWith("input of mlp.gate_up")).length, layers);
      strictEqual(int8.filter((k) => k.startsWith("matmulQ8Dp4a/")).length, 5 * layers);
      strictEqual(int8.filter((k) => k.startsWith("matmulQ8/")).length, 0);
      strictEqual(f32.filter((k) => k.startsWith("matmulQ8/")).length, 5 * layers);
    } finally {
      close();
    }
  },
);

/** A store that counts the tensors read from it. */
function counting(store: TensorStore): { store: TensorStore; reads: () => number } {
  let reads = 0;
  const wrapped = Object.create(store) as TensorStore;
  wrapped.read = (name: string) => (reads++, store.read(name));
  wrapped.readFloat32 = (name: string) => (reads++, store.readFloat32(name));
  return { store: wrapped, reads: () => reads };
}

gpuTest(
  "int8 prefill: refused by name for f32 weights, an unknown value, or WGSL without dot4I8Packed",
  async (gpu) => {
    const { config, store: opened, close } = await openFixture("tiny-gqa");
    const { store, reads } = counting(opened);
    try {
      await assertThrowsMessage(
        () => LlamaEngine.load(gpu, store, config, { format: "f32", prefillActivations: "int8" }),
        `LlamaEngine: prefillActivations "int8" needs quantised weights (format q8 or q4g128), got format f32`,
      );
      await assertThrowsMessage(
        () => LlamaEngine.load(gpu, store, config, { format: "q8", prefillActivations: "int4" as "int8" }),
        `LlamaEngine: prefillActivations must be "f32" or "int8", got "int4"`,
      );
      const features = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(navigator.gpu), "wgslLanguageFeatures");
      assert(features, "navigator.gpu has no wgslLanguageFeatures to hide");
      Object.defineProperty(navigator.gpu, "wgslLanguageFeatures", { value: new Set<string>(), configurable: true });
      try {
        assert(!hasDp4a());
        // Refused in the constructor, before the weights are read or anything is allocated.
        await assertThrowsMessage(
          () => LlamaEngine.load(gpu, store, config, { format: "q8", prefillActivations: "int8" }),
          `LlamaEngine: prefillActivations "int8" needs WGSL's packed_4x8_integer_dot_product language feature`,
        );
        // f32 activations need no feature.
        const engine = await LlamaEngine.load(gpu, opened, config, { format: "q8", maxSeq: 16 });
        engine.destroy();
      } finally {
        delete (navigator.gpu as unknown as Record<string, unknown>).wgslLanguageFeatures;
      }
      assert(hasDp4a());
      strictEqual(reads(), 0, "a refused load reads no tensor");
    } finally {
      close();
    }
  },
);
