/**
 * The Anima page (examples/anima/) in headless Chromium, on the oracle's tiny Anima (see
 * `browser_testing.ts`): its DiT (with the LLM adapter), VAE and Qwen3 files, with tokenizer files
 * under which the page's prompt and negative prompt tokenize to the golden run's Qwen and T5 ids
 * (`models/anima/fixtures/tokenizers.ts`), are answered from memory, with range requests, at
 * `/tiny-anima/`, with the golden run's noise beside them. Checked:
 *
 * - the page loads them, encodes both prompts with the Qwen3 encoder and runs the golden run, 3
 *   Euler steps with cfg 4 at 96 x 64, with no console error and no warning (Chromium reports a
 *   WebGPU validation error as a warning), reporting each stage's load and each step;
 * - its image bytes are the golden image's (`run/vae/image` as models/image.ts converts it) within
 *   one level;
 * - the canvas shows them and a PNG is offered.
 *
 * The wait is on the page's progress (`waitWhileProgressing`), not on a deadline. Screenshot:
 * `.screenshots/anima.png`.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { canvasCorner, pageTest, serveFromMemory, waitWhileProgressing } from "./browser_testing.ts";
import { qwenTokenizerJson } from "../llm/tokenizer/qwen.ts";
import { encodeSafetensors } from "../llm/safetensors_write.ts";
import { decodedToRgba } from "../models/image.ts";
import { goldenFile, loadGoldenIndex } from "../models/anima/fixtures/recipe.ts";
import { goldenPromptFiles } from "../models/anima/fixtures/tokenizers.ts";

interface PageAnima {
  state: string;
  adapter: string | null;
  loads: { stage: string; done: number; total: number }[];
  steps: number[];
  image: { width: number; height: number; data: number[] } | null;
  error: string | null;
  seconds: number | null;
}

const index = await loadGoldenIndex("tiny");
const io = await goldenFile("tiny", "io");
const ints = async (name: string) => [...new Int32Array((await io.read(name)).slice().buffer)];
const text = goldenPromptFiles(
  await ints("encoder/cond/input_ids"),
  (await ints("encoder/uncond/input_ids"))[0],
  await ints("adapter/cond/t5_ids"),
  index.configs.adapter.vocab as number,
);
const utf8 = (s: string) => new TextEncoder().encode(s);
const raw = async (name: "weights_dit" | "weights_vae" | "weights_qwen3") =>
  new Uint8Array(await Deno.readFile(new URL(`../models/anima/fixtures/${name}.safetensors`, import.meta.url)));
const [lh, lw] = io.info("run/noise").shape.slice(-2);
const noise = await io.readFloat32("run/noise");
const FILES: Record<string, Uint8Array> = {
  "dit.safetensors": await raw("weights_dit"),
  "vae.safetensors": await raw("weights_vae"),
  "qwen3/config.json": utf8(JSON.stringify({ ...index.configs.qwen3, model_type: "qwen3" })),
  "qwen3/model.safetensors": await raw("weights_qwen3"),
  "qwen3/tokenizer.json": utf8(JSON.stringify(qwenTokenizerJson({
    vocab: text.qwen["vocab.json"],
    merges: text.qwen["merges.txt"],
    tokenizerConfig: text.qwen["tokenizer_config.json"],
  }))),
  "qwen3/tokenizer_config.json": utf8(text.qwen["tokenizer_config.json"]),
  "spiece.model": text.spiece,
  "noise.safetensors": encodeSafetensors([
    { name: "noise", dtype: "F32", shape: [1, 16, lh, lw], data: new Uint8Array(noise.buffer) },
  ]),
};
const [width, height] = [8 * lw, 8 * lh];
const golden = decodedToRgba(await io.readFloat32("run/vae/image"), width, height);
const query = new URLSearchParams({
  dit: "/tiny-anima/dit.safetensors",
  vae: "/tiny-anima/vae.safetensors",
  qwen3: "/tiny-anima/qwen3/",
  t5: "/tiny-anima/spiece.model",
  noise: "/tiny-anima/noise.safetensors",
  prompt: text.prompt,
  negative: text.negativePrompt,
  width: String(width),
  height: String(height),
  steps: "3",
  cfg: "4",
  shift: "3",
});

pageTest(
  `examples/anima: the tiny checkpoint from URLs, the golden run's prompts, 3 CFG steps at ${width} x ${height}, its image within one level`,
  `examples/anima/?${query}&autorun`,
  async ({ page, consoleErrors, consoleWarnings, screenshot }) => {
    await waitWhileProgressing(
      page,
      `["done", "error"].includes(globalThis.__anima.state)`,
      "the Anima page's generation",
    );
    const a = await page.evaluate(() => (globalThis as unknown as { __anima: PageAnima }).__anima);
    strictEqual(a.state, "done", `page: ${a.error}`);
    console.log(`page: load and generate in ${a.seconds?.toFixed(1)} s (most of it compiling pipelines)`);
    deepStrictEqual(consoleErrors, []);
    deepStrictEqual(consoleWarnings, [], "no WebGPU validation error");
    ok(a.adapter, "the page names its adapter");
    deepStrictEqual(a.steps, [1, 2, 3]);
    deepStrictEqual([...new Set(a.loads.map((l) => l.stage))], ["adapter", "dit", "vae"]);
    deepStrictEqual([a.image!.width, a.image!.height, a.image!.data.length], [width, height, golden.length]);
    let worst = 0, differing = 0;
    for (let i = 0; i < golden.length; i++) {
      const d = Math.abs(a.image!.data[i] - golden[i]);
      worst = Math.max(worst, d);
      if (d > 0) differing++;
    }
    ok(worst <= 1, `image bytes: worst ${worst} levels, ${differing} of ${golden.length} differ`);
    console.log(
      `page image: worst ${worst} levels, ${differing} of ${golden.length} bytes differ; adapter ${a.adapter}`,
    );
    strictEqual(await page.locator("#download").isHidden(), false, "a PNG is offered");
    const corner = await canvasCorner(page);
    deepStrictEqual(corner, a.image!.data.slice(0, 4), "the canvas shows the image");
    await screenshot("anima");
  },
  async (page) => await serveFromMemory(page, "/tiny-anima/", FILES),
);
