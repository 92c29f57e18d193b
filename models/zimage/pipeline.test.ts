import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { parseDitConfig, parseVaeConfig } from "./config.ts";
import { goldenStore, goldenTensor, loadTinyIndex, maxRelative, recipeFile, recipeStore } from "./fixtures/recipe.ts";
import { ZImage } from "./pipeline.ts";
import { memoryFiles, type ZImageCheckpoint } from "./source.ts";
import { openDit, openVaeDecoder } from "./weights.ts";

const index = await loadTinyIndex();
const ditJson = index.config.dit as Record<string, unknown>, vaeJson = index.config.vae as Record<string, unknown>;

async function tinyCheckpoint(): Promise<ZImageCheckpoint> {
  const config = { dit: parseDitConfig(ditJson), vae: parseVaeConfig(vaeJson) };
  return {
    config,
    dit: openDit(await recipeStore(index, "dit"), config.dit),
    vae: openVaeDecoder(await recipeStore(index, "vae"), config.vae),
    layout: "diffusers",
  };
}

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
  for (const budget of [undefined, 2_400_000]) { // everything resident; then the DiT (2.36 MB), then the VAE
    const model = await ZImage.load(await tinyCheckpoint(), { device: gpu, maxResidentBytes: budget });
    strictEqual(model.resident, budget === undefined);
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
  deepStrictEqual(steps, [1, 2, 3, 1, 2, 3]);
});

gpuTest("ZImage: loads a diffusers directory (configs, weights) from files, and refuses bad options", async (gpu) => {
  const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  const files = memoryFiles({
    "transformer/config.json": json(ditJson),
    "transformer/diffusion_pytorch_model.safetensors": recipeFile(index, "dit"),
    "vae/config.json": json(vaeJson),
    "vae/diffusion_pytorch_model.safetensors": recipeFile(index, "vae"),
  });
  const model = await ZImage.load(files, { device: gpu });
  strictEqual(model.checkpoint.layout, "diffusers");
  const golden = await goldenRun();
  const out = await model.generate({
    promptEmbeds: golden.promptEmbeds,
    noise: golden.noise,
    width: 32,
    height: 24,
    steps: 3,
  });
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
    () => model.generate({ ...base, promptEmbeds: undefined, prompt: "a fox" }),
    "pass promptEmbeds",
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
    "the DiT needs 2387840 bytes of weights (f32), over maxResidentBytes 1000000",
  );
  await assertThrowsMessage(() => ZImage.load(memoryFiles({}), { device: gpu }), "neither a diffusers checkpoint");
  await assertThrowsMessage(
    () => ZImage.load(files, { device: gpu, format: "q5" as "q8" }),
    "format must be one of f32, q8, q4g128, got q5",
  );
});
