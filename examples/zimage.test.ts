/**
 * The Z-Image page (examples/zimage/) in headless Chromium, on the oracle's tiny Z-Image (see
 * `browser_testing.ts`): the tiny checkpoint (a diffusers directory: configs, the weights the oracle's
 * recipe rebuilds, and tokenizer files that tokenize as the oracle's byte tokenizer) is answered from
 * memory, with range requests, at `/tiny-zimage/`, with the golden run's noise beside it. Checked:
 *
 * - the page loads it through `urlFiles`, encodes the golden run's prompt (81 tokens) and runs 3 steps
 *   at 32 x 24 with no console error and no warning (Chromium reports a WebGPU validation error as a
 *   warning);
 * - its image bytes are upstream's (`pipeline.safetensors`'s `image_u8_nhwc`) within one level;
 * - the canvas shows them and a PNG is offered.
 *
 * The wait is on the page's progress (`waitWhileProgressing`), not on a deadline. Screenshot:
 * `.screenshots/zimage.png`.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { canvasCorner, pageTest, serveFromMemory, waitWhileProgressing } from "./browser_testing.ts";
import { encodeSafetensors } from "../llm/safetensors_write.ts";
import {
  byteTokenizerFiles,
  goldenStore,
  goldenTensor,
  loadTinyIndex,
  recipeFile,
} from "../models/zimage/fixtures/recipe.ts";

interface PageZImage {
  state: string;
  adapter: string | null;
  loads: { stage: string; done: number; total: number }[];
  steps: number[];
  image: { width: number; height: number; data: number[]; captionTokens?: number } | null;
  error: string | null;
  seconds: number | null;
}

const index = await loadTinyIndex();
const pipeline = await goldenStore("pipeline");
const tensorFile = (name: string, shape: number[], values: Float32Array) =>
  encodeSafetensors([{ name, dtype: "F32", shape, data: new Uint8Array(values.buffer) }]);
const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const FILES: Record<string, Uint8Array> = {
  "transformer/config.json": json(index.config.dit),
  "transformer/diffusion_pytorch_model.safetensors": recipeFile(index, "dit"),
  "vae/config.json": json(index.config.vae),
  "vae/diffusion_pytorch_model.safetensors": recipeFile(index, "vae"),
  "text_encoder/config.json": json(index.config.text_encoder),
  "text_encoder/model.safetensors": recipeFile(index, "text_encoder"),
  ...byteTokenizerFiles(),
  "inputs/noise.safetensors": tensorFile(
    "noise",
    [1, 16, 12, 16],
    (await goldenTensor(pipeline, "noise")) as Float32Array,
  ),
};
const golden = (await goldenTensor(pipeline, "image_u8_nhwc")) as Uint8Array;

pageTest(
  "examples/zimage: the tiny checkpoint from URLs, its prompt, 3 steps at 32 x 24, upstream's image bytes within one level",
  `examples/zimage/?model=/tiny-zimage/&prompt=${encodeURIComponent("a red fox sitting in fresh snow")}` +
    "&noise=/tiny-zimage/inputs/noise.safetensors&width=32&height=24&steps=3&autorun",
  async ({ page, consoleErrors, consoleWarnings, screenshot }) => {
    await waitWhileProgressing(page, `["done", "error"].includes(globalThis.__zimage?.state)`, "the tiny Z-Image");
    const z = await page.evaluate(() => (globalThis as unknown as { __zimage: PageZImage }).__zimage);
    strictEqual(z.state, "done", `page: ${z.error}`);
    // The page probes the files a diffusers directory may have instead of the ones it has (a shard
    // index per component, tokenizer.json before vocab.json and merges.txt); Chromium logs each 404.
    const probes = consoleErrors.filter((e) => e.includes("status of 404"));
    console.log(`page: load and generate in ${z.seconds?.toFixed(1)} s (most of it compiling pipelines)`);
    deepStrictEqual(consoleErrors.filter((e) => !e.includes("status of 404")), []);
    strictEqual(probes.length, 4, "404s: the three components' shard indexes, tokenizer/tokenizer.json");
    deepStrictEqual(consoleWarnings, [], "no WebGPU validation error");
    ok(z.adapter, "the page names its adapter");
    deepStrictEqual(z.steps, [1, 2, 3]);
    deepStrictEqual([...new Set(z.loads.map((l) => l.stage))], ["text_encoder", "dit", "vae"]);
    deepStrictEqual([z.image!.width, z.image!.height, z.image!.captionTokens], [32, 24, 81]);
    let worst = 0, differing = 0;
    for (let i = 0; i < 32 * 24; i++) {
      for (let c = 0; c < 3; c++) {
        const d = Math.abs(z.image!.data[4 * i + c] - golden[3 * i + c]);
        worst = Math.max(worst, d);
        if (d > 0) differing++;
      }
      strictEqual(z.image!.data[4 * i + 3], 255);
    }
    ok(worst <= 1, `image bytes: worst ${worst} levels, ${differing} of ${golden.length} differ`);
    console.log(
      `page image: worst ${worst} levels, ${differing} of ${golden.length} bytes differ; adapter ${z.adapter}`,
    );
    strictEqual(await page.locator("#download").isHidden(), false, "a PNG is offered");
    const corner = await canvasCorner(page);
    deepStrictEqual(corner, z.image!.data.slice(0, 4), "the canvas shows the image");
    await screenshot("zimage");
  },
  async (page) => await serveFromMemory(page, "/tiny-zimage/", FILES),
);
