import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import type { Tokenizer } from "../../llm/tokenizer/tokenizer.ts";
import { Qwen3Encoder } from "../qwen3/encoder.ts";
import { parseQwen3Config } from "../qwen3/config.ts";
import { parseDitConfig, parseVaeConfig } from "./config.ts";
import {
  byteTokenizerFiles,
  goldenStore,
  goldenTensor,
  loadTinyIndex,
  maxRelative,
  recipeFile,
  recipeStore,
} from "./fixtures/recipe.ts";
import { ZImage } from "./pipeline.ts";
import { memoryFiles, type ZImageCheckpoint } from "./source.ts";
import { openDit, openVaeDecoder } from "./weights.ts";

const index = await loadTinyIndex();
const ditJson = index.config.dit as Record<string, unknown>, vaeJson = index.config.vae as Record<string, unknown>;
const teConfig = parseQwen3Config(index.config.text_encoder as Record<string, unknown>);

async function tinyCheckpoint(): Promise<ZImageCheckpoint> {
  const config = { dit: parseDitConfig(ditJson), vae: parseVaeConfig(vaeJson) };
  return {
    config,
    dit: openDit(await recipeStore(index, "dit"), config.dit),
    vae: openVaeDecoder(await recipeStore(index, "vae"), config.vae),
    textEncoder: { store: await recipeStore(index, "text_encoder"), config: teConfig },
    layout: "diffusers",
  };
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

/** The golden run's inputs and outputs (upstream's generate(), 3 steps, 32 x 24 pixels). */
async function goldenRun() {
  const p = await goldenStore("pipeline");
  return {
    promptEmbeds: (await goldenTensor(p, "prompt_embeds")) as Float32Array,
    noise: (await goldenTensor(p, "noise")) as Float32Array,
    latent: (await goldenTensor(p, "step2.latent_out")) as Float32Array,
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

gpuTest("ZImage: the 3-step pipeline from the stored noise and caption features, to the image bytes", async (gpu) => {
  const golden = await goldenRun();
  const steps: number[] = [];
  // Everything resident; then the stages in turn (the DiT takes 2.39 MB whole); then the same with the DiT's
  // blocks streamed through two slots (2.00 MB).
  const residency = new Map([
    [undefined, [true, true, true, false]],
    [2_400_000, [false, false, false, false]],
    [2_100_000, [false, false, false, true]],
  ]);
  for (const [budget, resident] of residency) {
    const model = await ZImage.load(await tinyCheckpoint(), { device: gpu, maxResidentBytes: budget });
    deepStrictEqual(Object.values(model.resident), resident);
    const out = await model.generate({
      promptEmbeds: golden.promptEmbeds,
      noise: golden.noise,
      width: 32,
      height: 24,
      steps: 3,
      keepLatent: true,
      onStep: ({ step }) => steps.push(step),
    });
    deepStrictEqual([out.width, out.height, out.data.length, out.seed], [32, 24, 32 * 24 * 4, undefined]);
    const rel = maxRelative(out.latent!, golden.latent);
    ok(rel < 1e-4, `final latent: max rel ${rel}`);
    const { worst, differing } = byteDiff(out.data, golden.image);
    ok(worst <= 1, `image bytes: worst ${worst} levels, ${differing} of ${golden.image.length} differ`);
    console.log(`budget ${budget}: latent max rel ${rel.toExponential(2)}, bytes worst ${worst}, ${differing} differ`);
    model.destroy();
  }
  deepStrictEqual(steps, [1, 2, 3, 1, 2, 3, 1, 2, 3]);
});

gpuTest(
  "ZImage: the tiny text encoder's hidden_states[-2] (text_encoder.safetensors), and the pipeline from the prompt",
  async (gpu) => {
    // The encoder alone, on the oracle's two prompts (24 and 13 tokens).
    const te = await goldenStore("text_encoder");
    const ids = (await goldenTensor(te, "input_ids")) as Int32Array,
      mask = (await goldenTensor(te, "attention_mask")) as Int32Array;
    const encoder = await Qwen3Encoder.load(gpu, await recipeStore(index, "text_encoder"), teConfig, {
      hiddenState: -2,
    });
    for (const b of [0, 1]) {
      const row = ids.subarray(24 * b, 24 * (b + 1)),
        n = mask.subarray(24 * b, 24 * (b + 1)).reduce((a, v) => a + v, 0);
      const rel = maxRelative(
        await encoder.encode(row.subarray(0, n)),
        await goldenTensor(te, `item${b}.hidden_states_m2`),
      );
      ok(rel < 1e-4, `item${b}.hidden_states_m2: max rel ${rel}`);
    }
    encoder.destroy();
    // The whole pipeline from the prompt text: upstream's generate() with the oracle's byte tokenizer.
    const golden = await goldenRun();
    const p = await goldenStore("pipeline");
    const prompt = "a red fox sitting in fresh snow";
    for (const budget of [undefined, 2_400_000]) {
      const loads: string[] = [];
      const model = await ZImage.load(await tinyCheckpoint(), {
        device: gpu,
        tokenizer: byteTokenizer,
        maxResidentBytes: budget,
        onProgress: ({ stage }) => loads.at(-1) !== stage && loads.push(stage),
      });
      const wantIds = [...((await goldenTensor(p, "input_ids")) as Int32Array).subarray(0, 81)];
      deepStrictEqual(model.captionIds(prompt), wantIds);
      const out = await model.generate({
        prompt,
        noise: golden.noise,
        width: 32,
        height: 24,
        steps: 3,
        keepLatent: true,
      });
      strictEqual(out.captionTokens, 81);
      const rel = maxRelative(out.latent!, golden.latent);
      const { worst, differing } = byteDiff(out.data, golden.image);
      console.log(
        `from the prompt, budget ${budget}: latent ${rel.toExponential(2)}, bytes worst ${worst}, ${differing} differ`,
      );
      ok(rel < 1e-4, `final latent: max rel ${rel}`);
      ok(worst <= 1, `image bytes: worst ${worst} levels`);
      // Resident: loaded at load(); staged: each stage loaded when it ran, in order (each once here).
      deepStrictEqual(loads, ["text_encoder", "dit", "vae"]);
      model.destroy();
    }
  },
);

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
    const golden = await goldenRun();
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
  },
);
