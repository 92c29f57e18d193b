import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import type { Tokenizer } from "../../llm/tokenizer/tokenizer.ts";
import { Qwen3Encoder } from "../qwen3/encoder.ts";
import { parseQwen3Config } from "../qwen3/config.ts";
import { parseDitConfig, parseVaeConfig } from "./config.ts";
import {
  byteTokenizerFiles,
  GOLDEN_SETS,
  goldenCases,
  type GoldenSet,
  goldenStore,
  goldenTensor,
  loadTinyIndex,
  maxRelative,
  recipeFile,
  recipeStore,
} from "./fixtures/recipe.ts";
import { textEncoderWeightBytes, ZImage } from "./pipeline.ts";
import { ditWeightBytes } from "./transformer/dit.ts";
import { memoryFiles, type ZImageCheckpoint } from "./source.ts";
import { openDit, openVaeDecoder } from "./weights.ts";

const index = await loadTinyIndex();
const ditJson = index.config.dit as Record<string, unknown>, vaeJson = index.config.vae as Record<string, unknown>;
/** Worst image level int8 activations may move in the tiny pipelines (q8 blocks): measured 2 (tiny) and 4 (tiny2). */
const INT8_IMAGE_LEVELS = 8;

/** A golden set's weights as an opened checkpoint (diffusers names), and its configs. */
async function tinyCheckpoint(set: GoldenSet): Promise<ZImageCheckpoint> {
  const index = await loadTinyIndex(set);
  const config = {
    dit: parseDitConfig(index.config.dit as Record<string, unknown>),
    vae: parseVaeConfig(index.config.vae as Record<string, unknown>),
  };
  return {
    config,
    dit: openDit(await recipeStore(index, "dit"), config.dit),
    vae: openVaeDecoder(await recipeStore(index, "vae"), config.vae),
    textEncoder: {
      store: await recipeStore(index, "text_encoder"),
      config: parseQwen3Config(index.config.text_encoder as Record<string, unknown>),
    },
    layout: "diffusers",
  };
}

/**
 * Budgets that keep a checkpoint's stages (f32) loaded in turn: the largest stage with the DiT whole,
 * then with its blocks streamed; each checked to hold less than the level above.
 */
function stagedBudgets(checkpoint: ZImageCheckpoint): { whole: number; streamed: number } {
  const te = textEncoderWeightBytes(checkpoint.textEncoder!.config, "f32");
  const vae = checkpoint.vae.tensors.reduce((n, t) => n + 4 * t.shape.reduce((a, b) => a * b, 1), 0);
  const dit = (stream: boolean) => ditWeightBytes(checkpoint.config.dit, "f32", stream);
  const whole = Math.max(te, dit(false), vae), streamed = Math.max(te, dit(true), vae);
  ok(whole < te + dit(false) + vae && streamed < dit(false), `budgets ${whole}, ${streamed}`);
  return { whole, streamed };
}

/** The oracle's ByteTokenizer (shims.py): one id per UTF-8 byte of the templated prompt, vocab 256. */
const byteTokenizer: Tokenizer = {
  vocabSize: 256,
  bosId: null,
  eosId: null,
  unkId: null,
  padId: 0,
  encode: (text: string) => [...new TextEncoder().encode(text)],
  decode: (ids: readonly number[]) => new TextDecoder().decode(Uint8Array.from(ids)),
  idToToken: (id: number) => String.fromCharCode(id),
} as unknown as Tokenizer;

/** A golden set's pipeline run (upstream's generate()): its inputs, final latent and image bytes. */
async function goldenRun(set: GoldenSet) {
  const p = await goldenStore("pipeline", set);
  const { prompt, width, height, steps } = goldenCases(await loadTinyIndex(set)).pipeline;
  const mask = (await goldenTensor(p, "attention_mask")) as Int32Array;
  return {
    prompt,
    width,
    height,
    steps,
    ids: [...((await goldenTensor(p, "input_ids")) as Int32Array).subarray(0, mask.reduce((a, v) => a + v, 0))],
    promptEmbeds: (await goldenTensor(p, "prompt_embeds")) as Float32Array,
    noise: (await goldenTensor(p, "noise")) as Float32Array,
    latent: (await goldenTensor(p, `step${steps - 1}.latent_out`)) as Float32Array,
    image: (await goldenTensor(p, "image_u8_nhwc")) as Uint8Array,
  };
}

/** Largest difference in levels between RGBA bytes and the golden's RGB, and how many differ. */
function byteDiff(rgba: Uint8ClampedArray, rgb: Uint8Array): { worst: number; differing: number } {
  let worst = 0, differing = 0;
  for (let i = 0; i < rgb.length / 3; i++) {
    for (let c = 0; c < 3; c++) {
      const d = Math.abs(rgba[4 * i + c] - rgb[3 * i + c]);
      worst = Math.max(worst, d);
      if (d > 0) differing++;
    }
    if (rgba[4 * i + 3] !== 255) return { worst: Infinity, differing };
  }
  return { worst, differing };
}

for (const set of GOLDEN_SETS) {
  const { width, height, steps } = goldenCases(await loadTinyIndex(set)).pipeline;
  gpuTest(
    `ZImage (${set}): the ${steps}-step pipeline (${width} x ${height}) from the stored noise and caption features, to the image bytes`,
    async (gpu) => {
      const golden = await goldenRun(set);
      const { whole, streamed } = stagedBudgets(await tinyCheckpoint(set));
      const done: number[] = [];
      // Everything resident; then the stages in turn; then the same with the DiT's blocks streamed through two slots.
      const residency = new Map([
        [undefined, [true, true, true, false]],
        [whole, [false, false, false, false]],
        [streamed, [false, false, false, true]],
      ]);
      for (const [budget, resident] of residency) {
        const model = await ZImage.load(await tinyCheckpoint(set), { device: gpu, maxResidentBytes: budget });
        deepStrictEqual(Object.values(model.resident), resident, `budget ${budget}`);
        const out = await model.generate({
          promptEmbeds: golden.promptEmbeds,
          noise: golden.noise,
          width,
          height,
          steps,
          keepLatent: true,
          onStep: ({ step }) => done.push(step),
        });
        deepStrictEqual([out.width, out.height, out.data.length, out.seed], [
          width,
          height,
          width * height * 4,
          undefined,
        ]);
        const rel = maxRelative(out.latent!, golden.latent);
        ok(rel < 1e-4, `${set} final latent: max rel ${rel}`);
        const { worst, differing } = byteDiff(out.data, golden.image);
        ok(worst <= 1, `${set} image bytes: worst ${worst} levels, ${differing} of ${golden.image.length} differ`);
        console.log(
          `budget ${budget}: latent max rel ${rel.toExponential(2)}, bytes worst ${worst}, ${differing} differ`,
        );
        model.destroy();
      }
      const oneRun = Array.from({ length: steps }, (_, k) => k + 1);
      deepStrictEqual(done, [...oneRun, ...oneRun, ...oneRun]);
    },
  );

  gpuTest(
    `ZImage (${set}): the ${steps}-step pipeline with q8 blocks on int8 activations: its image against f32 activations`,
    async (gpu) => {
      const golden = await goldenRun(set);
      const image = async (activations: "f32" | "int8") => {
        const model = await ZImage.load(await tinyCheckpoint(set), { device: gpu, format: "q8", activations });
        try {
          return await model.generate({
            promptEmbeds: golden.promptEmbeds,
            noise: golden.noise,
            width,
            height,
            steps,
            keepLatent: true,
          });
        } finally {
          model.destroy();
        }
      };
      const [withF32, withInt8] = [await image("f32"), await image("int8")];
      const rel = maxRelative(withInt8.latent!, withF32.latent!);
      const levels = withInt8.data.map((v, i) => Math.abs(v - withF32.data[i]));
      const worst = Math.max(...levels), differing = levels.filter((d) => d > 0).length;
      console.log(
        `int8 activations: latent max rel ${rel.toExponential(2)}, bytes worst ${worst}, ${differing} differ`,
      );
      ok(rel > 1e-6, `${set}: int8 activations changed nothing`);
      ok(worst <= INT8_IMAGE_LEVELS, `${set} image bytes: worst ${worst} levels, ${differing} differ`);
    },
  );

  gpuTest(
    `ZImage (${set}): the text encoder's hidden_states[-2] (text_encoder.safetensors), and the pipeline from the prompt`,
    async (gpu) => {
      const index = await loadTinyIndex(set);
      const teConfig = parseQwen3Config(index.config.text_encoder as Record<string, unknown>);
      const { seqLen, lengths } = goldenCases(index).textEncoder;
      // The encoder alone, as the pipeline loads it (the embedding's rows gathered on the host), on the
      // oracle's two prompts; and its first hidden state, the rows themselves.
      const te = await goldenStore("text_encoder", set);
      const ids = (await goldenTensor(te, "input_ids")) as Int32Array;
      const store = await recipeStore(index, "text_encoder");
      for (const format of ["f32", "q8"] as const) {
        const encoder = await Qwen3Encoder.load(gpu, store, teConfig, { format, hiddenState: -2, embedding: "host" });
        strictEqual(encoder.weightBytes, textEncoderWeightBytes(teConfig, format), `${format} weight bytes`);
        if (format === "f32") {
          for (const [b, n] of lengths.entries()) {
            const rel = maxRelative(
              await encoder.encode(ids.subarray(seqLen * b, seqLen * b + n)),
              await goldenTensor(te, `item${b}.hidden_states_m2`),
            );
            console.log(`item${b}.hidden_states_m2 (${n} tokens): max rel ${rel.toExponential(2)}`);
            ok(rel < 1e-4, `${set} item${b}.hidden_states_m2: max rel ${rel}`);
          }
        }
        encoder.destroy();
      }
      const embed = await Qwen3Encoder.load(gpu, store, teConfig, { hiddenState: 0, embedding: "host" });
      deepStrictEqual(
        await embed.encode(ids.subarray(0, lengths[0])),
        await goldenTensor(te, "item0.hidden_states.0"),
        "item0's embeddings",
      );
      embed.destroy();
      // The whole pipeline from the prompt text: upstream's generate() with the oracle's byte tokenizer.
      const golden = await goldenRun(set);
      for (const budget of [undefined, stagedBudgets(await tinyCheckpoint(set)).whole]) {
        const loads: string[] = [], wholeReads: string[] = [];
        const checkpoint = await tinyCheckpoint(set), te = checkpoint.textEncoder!.store;
        checkpoint.textEncoder!.store = {
          ...te,
          info: (name) => te.info(name),
          read: (name) => (wholeReads.push(name), te.read(name)),
          readFloat32: (name) => (wholeReads.push(name), te.readFloat32(name)),
          readRows: (name, row0, rows) => te.readRows(name, row0, rows),
        };
        const model = await ZImage.load(checkpoint, {
          device: gpu,
          tokenizer: byteTokenizer,
          maxResidentBytes: budget,
          onProgress: ({ stage }) => loads.at(-1) !== stage && loads.push(stage),
        });
        deepStrictEqual(model.captionIds(golden.prompt), golden.ids);
        const out = await model.generate({
          prompt: golden.prompt,
          noise: golden.noise,
          width: golden.width,
          height: golden.height,
          steps: golden.steps,
          keepLatent: true,
        });
        strictEqual(out.captionTokens, golden.ids.length);
        const rel = maxRelative(out.latent!, golden.latent);
        const { worst, differing } = byteDiff(out.data, golden.image);
        console.log(
          `from the prompt, budget ${budget}: latent ${
            rel.toExponential(2)
          }, bytes worst ${worst}, ${differing} differ`,
        );
        ok(rel < 1e-4, `${set} final latent: max rel ${rel}`);
        ok(worst <= 1, `${set} image bytes: worst ${worst} levels`);
        // Resident: loaded at load(); staged: each stage loaded when it ran, in order (each once here).
        deepStrictEqual(loads, ["text_encoder", "dit", "vae"]);
        // The encoder's layers were read, its embedding table only row by row.
        ok(wholeReads.length > 0 && !wholeReads.some((n) => n.endsWith("embed_tokens.weight")), `${wholeReads}`);
        model.destroy();
      }
    },
  );
}

gpuTest(
  "ZImage: a diffusers directory (configs, weights, text encoder, tokenizer) from the prompt; bad options",
  async (gpu) => {
    const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    const files = memoryFiles({
      "transformer/config.json": json(ditJson),
      "transformer/diffusion_pytorch_model.safetensors": recipeFile(index, "dit"),
      "vae/config.json": json(vaeJson),
      "vae/diffusion_pytorch_model.safetensors": recipeFile(index, "vae"),
      "text_encoder/config.json": json(index.config.text_encoder),
      "text_encoder/model.safetensors": recipeFile(index, "text_encoder"),
      ...byteTokenizerFiles(),
    });
    const model = await ZImage.load(files, { device: gpu });
    strictEqual(model.checkpoint.layout, "diffusers");
    const golden = await goldenRun("tiny");
    const out = await model.generate({
      prompt: "a red fox sitting in fresh snow",
      noise: golden.noise,
      width: 32,
      height: 24,
      steps: 3,
    });
    strictEqual(out.captionTokens, 81);
    ok(byteDiff(out.data, golden.image).worst <= 1);
    // A seed instead of noise: reproducible, and reported.
    const a = await model.generate({ promptEmbeds: golden.promptEmbeds, seed: 5, width: 16, height: 16, steps: 2 });
    const b = await model.generate({ promptEmbeds: golden.promptEmbeds, seed: 5, width: 16, height: 16, steps: 2 });
    deepStrictEqual([a.seed, a.data], [5, b.data]);
    const base = { promptEmbeds: golden.promptEmbeds, width: 32, height: 24, steps: 3 };
    await assertThrowsMessage(
      () => model.generate({ ...base, width: 30 }),
      "width must be a positive multiple of 4, got 30",
    );
    await assertThrowsMessage(
      () => model.generate({ ...base, promptEmbeds: new Float32Array(33) }),
      "promptEmbeds must be a Float32Array of [tokens >= 1, 32]",
    );
    await assertThrowsMessage(
      () => model.generate({ ...base, noise: new Float32Array(5) }),
      "noise must be a Float32Array",
    );
    await assertThrowsMessage(
      () => model.generate({ ...base, steps: 0 }),
      "steps must be an integer in [1, 1000], got 0",
    );
    const aborted = new AbortController();
    aborted.abort(new Error("stopped by the test"));
    await assertThrowsMessage(() => model.generate({ ...base, signal: aborted.signal }), "stopped by the test");
    model.destroy();
    await assertThrowsMessage(() => model.generate(base), "the model was destroyed");
    await assertThrowsMessage(
      () => ZImage.load(files, { device: gpu, maxResidentBytes: 1_000_000 }),
      "the DiT needs 1995136 bytes of weights with its blocks streamed, over maxResidentBytes 1000000",
    );
    await assertThrowsMessage(() => ZImage.load(memoryFiles({}), { device: gpu }), "neither a diffusers checkpoint");
    const bare = await ZImage.load(
      memoryFiles({
        "transformer/config.json": json(ditJson),
        "transformer/diffusion_pytorch_model.safetensors": recipeFile(index, "dit"),
        "vae/config.json": json(vaeJson),
        "vae/diffusion_pytorch_model.safetensors": recipeFile(index, "vae"),
      }),
      { device: gpu },
    );
    await assertThrowsMessage(
      () => bare.generate({ ...base, promptEmbeds: undefined, prompt: "a fox" }),
      "no tokenizer (the checkpoint has no tokenizer/ and none was given): pass promptEmbeds",
    );
    bare.destroy();
    const tokenizerOnly = await ZImage.load(
      memoryFiles({
        "transformer/config.json": json(ditJson),
        "transformer/diffusion_pytorch_model.safetensors": recipeFile(index, "dit"),
        "vae/config.json": json(vaeJson),
        "vae/diffusion_pytorch_model.safetensors": recipeFile(index, "vae"),
      }),
      { device: gpu, tokenizer: byteTokenizer },
    );
    await assertThrowsMessage(
      () => tokenizerOnly.generate({ ...base, promptEmbeds: undefined, prompt: "a fox" }),
      "the checkpoint has no text encoder: pass promptEmbeds",
    );
    tokenizerOnly.destroy();
    await assertThrowsMessage(
      () => ZImage.load(files, { device: gpu, format: "q5" as "q8" }),
      "format must be one of f32, q8, q4g128, got q5",
    );
    await assertThrowsMessage(
      () => ZImage.load(files, { device: gpu, activations: "int8" }),
      'ZImage.load: activations "int8" needs quantised weights (format q8 or q4g128), got format f32',
    );
  },
);

/** A view of a store whose reads call `onRead` first, with the method and the tensor (it may throw: a read error). */
function watchedStore(store: TensorStore, onRead: (method: string, name: string) => void): TensorStore {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      if (key === "read" || key === "readRows" || key === "readFloat32") {
        return (...args: unknown[]) => {
          onRead(key, String(args[0]));
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
}

gpuTest(
  "ZImage: a load that fails halfway (a read error in the text encoder, the DiT or the VAE) leaves no buffer behind",
  async (gpu) => {
    const base = await tinyCheckpoint("tiny");
    const watched = (onRead: () => void): ZImageCheckpoint => ({
      ...base,
      dit: watchedStore(base.dit, onRead),
      vae: watchedStore(base.vae, onRead),
      textEncoder: { ...base.textEncoder!, store: watchedStore(base.textEncoder!.store, onRead) },
    });
    let reads = 0;
    (await ZImage.load(watched(() => reads++), { device: gpu })).destroy();
    const before = gpu.memory;
    // Failures spread over the whole load (the text encoder, then the DiT, then the VAE), the last
    // read included, in each format (the quantized ones allocate codes and scales before quantizing).
    const points = [
      ...new Set([0, 1, ...Array.from({ length: 10 }, (_, i) => Math.floor((i * reads) / 10)), reads - 1]),
    ];
    for (const [k, at] of points.entries()) {
      const format = (["f32", "q8", "q4g128"] as const)[k % 3];
      let n = 0;
      const fail = () => {
        if (n++ === at) throw new Error(`read ${at} failed`);
      };
      await assertThrowsMessage(() => ZImage.load(watched(fail), { device: gpu, format }), `read ${at} failed`);
      deepStrictEqual(
        [gpu.memory.bytes, gpu.memory.buffers],
        [before.bytes, before.buffers],
        `${format}, failing at read ${at} of ${reads}`,
      );
    }
  },
);

gpuTest(
  "ZImage: stages loaded in turn come back from host copies: the second image reads no weight from the checkpoint and is the same image",
  async (gpu) => {
    const golden = await goldenRun("tiny");
    const { whole, streamed } = stagedBudgets(await tinyCheckpoint("tiny"));
    const image = {
      prompt: golden.prompt,
      noise: golden.noise,
      width: golden.width,
      height: golden.height,
      steps: golden.steps,
    };
    for (const [budget, keepHostCopies] of [[whole, undefined], [streamed, undefined], [whole, false]] as const) {
      const base = await tinyCheckpoint("tiny");
      const reads: string[] = [], loads: string[] = [];
      // Whole-tensor reads; the embedding's rows (readRows) are read for every prompt by design.
      const onRead = (method: string, name: string) => method !== "readRows" && reads.push(name);
      const checkpoint: ZImageCheckpoint = {
        ...base,
        dit: watchedStore(base.dit, onRead),
        vae: watchedStore(base.vae, onRead),
        textEncoder: { ...base.textEncoder!, store: watchedStore(base.textEncoder!.store, onRead) },
      };
      const before = gpu.memory.bytes;
      const model = await ZImage.load(checkpoint, {
        device: gpu,
        tokenizer: byteTokenizer,
        maxResidentBytes: budget,
        keepHostCopies,
        onProgress: ({ stage }) => loads.at(-1) !== stage && loads.push(stage),
      });
      const label = `budget ${budget}, keepHostCopies ${keepHostCopies}`;
      deepStrictEqual(Object.values(model.resident).slice(0, 3), [false, false, false], label);
      const first = await model.generate(image);
      ok(reads.length > 0, label);
      reads.length = 0;
      loads.length = 0;
      const second = await model.generate(image);
      deepStrictEqual(loads, ["text_encoder", "dit", "vae"], label);
      if (keepHostCopies === false) {
        ok(reads.length > 0, `${label}: the checkpoint is read again`);
        strictEqual(model.hostBytes, 0, label);
      } else {
        deepStrictEqual(reads, [], `${label}: no weight read`);
        const te = textEncoderWeightBytes(base.textEncoder!.config, "f32");
        const stages = te + ditWeightBytes(base.config.dit, "f32", model.resident.ditStreamed) +
          base.vae.tensors.reduce((n, t) => n + 4 * t.shape.reduce((a, b) => a * b, 1), 0);
        // Each buffer's bytes as allocated: the weights, each rounded up to 16 bytes.
        ok(model.hostBytes >= stages && model.hostBytes < stages * 1.1, `${label}: ${model.hostBytes} of ${stages}`);
      }
      deepStrictEqual(second.data, first.data, label);
      ok(byteDiff(second.data, golden.image).worst <= 1, label);
      // Every stage released after the image: nothing of the model left on the GPU.
      strictEqual(gpu.memory.bytes, before, label);
      model.destroy();
    }
  },
);
