/**
 * The chat page (examples/chat/) in headless Chromium, on the fortune model (see `browser_testing.ts`):
 *
 * - it loads the model from the server through the weight cache (every byte from the network, in a
 *   fresh browser) and runs with no console error and no warning (Chromium reports a WebGPU
 *   validation error, a shader its compiler refuses say, as a warning, and the page goes on);
 * - greedy, "A computer is", 32 tokens at most, f32: the page's ids are the ids `LlamaEngine` gives in
 *   this Deno process (on Deno's adapter) and torch's in `greedy.json`. Compared: the ids through the
 *   first end-of-sequence id (the config's, 2), which both engines yield and then stop at, or all 32
 *   when none comes; torch's run did not stop at end-of-sequence, so its list is cut there the same
 *   way. (For this prompt no end-of-sequence comes within 32, so all 32 ids are compared.) The text
 *   shown is the tokenizer's decoding of them, and the tokens/s shown is a number above 0;
 * - after a change of format to q4g128, Stop ends a long sampled generation (the engine's
 *   AbortSignal) within the steps queued when it was pressed, and the page says after how many
 *   tokens; a screenshot is taken while it generates;
 * - in q8, the LineFormatConstraint demo ends at end-of-sequence with a line the constraint accepts, id by
 *   id (a constraint built here from the segments the page reports, over this process's tokenizer),
 *   and whose text has the segments' shape.
 *
 * Every wait is on the page's progress, not on a deadline: on the software adapter of a busy machine
 * a run takes as long as it takes, and only a page that stops changing fails (`waitWhileProgressing`).
 *
 * Screenshots: `.screenshots/chat-generating.png` and `.screenshots/chat.png`.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { pageTest, waitWhileProgressing } from "./browser_testing.ts";
import { testDevice } from "../harness/testing.ts";
import { parseLlamaConfig } from "../models/llama/config.ts";
import { LineFormatConstraint, type LineSegment } from "../llm/constraints/line_format.ts";
import { LlamaEngine } from "../models/llama/engine.ts";
import { openCheckpointDir } from "../llm/safetensors_file.ts";
import { SentencePieceTokenizer } from "../llm/tokenizer/sentencepiece.ts";
import { parseManifest, serializeManifest } from "../llm/cache/manifest.ts";
import { manifestOfFiles } from "../llm/cache/directory.ts";

const DIR = new URL("../models/fortune/", import.meta.url).pathname;
const PROMPT = "A computer is";
const MAX_TOKENS = 32;

/** What the page keeps in `globalThis.__chat` (the parts checked here). */
interface PageRun {
  prompt: string;
  promptIds: number[];
  format: string;
  ids: number[];
  text: string;
  outcome: "running" | "eos" | "max-tokens" | "stopped" | "device-lost" | "error";
  error?: string;
  tokensPerSecond: number | null;
  readEvery: number;
  inFlight: number;
  lineComplete?: boolean;
}
interface PageChat {
  state: string;
  adapter: string | null;
  lineSegments: LineSegment[];
  loads: { stage: string; format?: string; bytes?: number; fromNetwork?: number }[];
  runs: PageRun[];
}

Deno.test("examples/chat: the fortune model's manifest names its files as they are", async () => {
  const written = await Deno.readTextFile(`${DIR}manifest.json`);
  const names = parseManifest(written).files.map((f) => f.name);
  deepStrictEqual(names, ["config.json", "tokenizer.model", "model.safetensors"]);
  const now = serializeManifest(await manifestOfFiles(DIR, names));
  strictEqual(written, now, "models/fortune/manifest.json is stale: write it again with manifestOfFiles");
});

/** The ids through the first end-of-sequence id, or all of them when none comes. */
function throughEos(ids: readonly number[], eos: readonly number[]): number[] {
  const end = ids.findIndex((id) => eos.includes(id));
  return end < 0 ? [...ids] : ids.slice(0, end + 1);
}

const chatOf = (page: import("./browser_testing.ts").Page) =>
  page.evaluate(() => (globalThis as unknown as { __chat: PageChat }).__chat);

/** Waits until the page's run `index` has ended (or the page failed), however slowly it goes, and returns it. */
async function ended(page: import("./browser_testing.ts").Page, index: number): Promise<PageRun> {
  await waitWhileProgressing(
    page,
    `(() => { const c = globalThis.__chat; const r = c?.runs[${index}]; ` +
      `return (r && r.outcome !== "running") || c?.state === "error"; })()`,
    `run ${index}`,
  );
  const run = (await chatOf(page)).runs[index];
  ok(run, `run ${index} ended: ${await page.textContent("#status")}`);
  return run;
}

/** Chooses a format and waits for the engine to load in it. */
async function loadFormat(page: import("./browser_testing.ts").Page, format: string): Promise<void> {
  await page.selectOption("#format", format);
  await waitWhileProgressing(page, `globalThis.__chat.state !== "loading"`, `loading ${format}`);
  strictEqual((await chatOf(page)).state, "ready", `${format}: ${await page.textContent("#status")}`);
}

pageTest(
  "examples/chat: greedy ids equal Deno's engine and torch's, Stop aborts, the line constraint holds, tokens/s shown, a lost device is recovered",
  `examples/chat/?prompt=${encodeURIComponent(PROMPT)}&format=f32&mode=greedy&maxTokens=${MAX_TOKENS}&autorun`,
  async ({ page, consoleErrors, consoleWarnings, screenshot }) => {
    const tokenizer = new SentencePieceTokenizer(await Deno.readFile(`${DIR}tokenizer.model`));
    const config = parseLlamaConfig(await Deno.readTextFile(`${DIR}config.json`));
    const eos = config.eosTokenIds;
    deepStrictEqual(eos, [2]);
    const decode = (ids: number[]) => tokenizer.decode(ids.filter((id) => !eos.includes(id)));

    // The greedy run, started by the URL.
    const greedy = await ended(page, 0);
    deepStrictEqual(consoleErrors, []);
    deepStrictEqual(consoleWarnings, [], "no WebGPU validation error");
    const chat = await chatOf(page);
    ok(chat.adapter && /^Adapter: /.test(await page.textContent("#adapter") ?? ""), "the page shows its adapter");
    const files = chat.loads.find((l) => l.stage === "files")!;
    ok(files.bytes! > 13e6 && files.fromNetwork === files.bytes, "a fresh browser took every file from the server");
    const promptIds = [tokenizer.bosId!, ...tokenizer.encode(PROMPT)];
    deepStrictEqual([greedy.prompt, greedy.promptIds, greedy.format], [PROMPT, promptIds, "f32"]);
    ok(greedy.outcome === "eos" || greedy.outcome === "max-tokens", greedy.outcome);

    const torch = (JSON.parse(await Deno.readTextFile(`${DIR}greedy.json`)) as { ids: number[]; greedy: number[] }[])
      .find((r) => r.ids.join() === promptIds.join());
    ok(torch && torch.greedy.length === MAX_TOKENS, "greedy.json has torch's 32 greedy ids for the prompt");
    const gpu = await testDevice();
    const { store, close } = await openCheckpointDir(DIR);
    const engine = await LlamaEngine.load(gpu, store, config, { format: "f32", maxSeq: 64 });
    close();
    const deno: number[] = [];
    try {
      for await (const id of engine.generate(promptIds, { maxTokens: MAX_TOKENS })) deno.push(id);
    } finally {
      engine.destroy();
    }
    deepStrictEqual(greedy.ids, deno, "the page's greedy ids are the Deno engine's");
    deepStrictEqual(greedy.ids, throughEos(torch.greedy, eos), "the page's greedy ids are torch's");
    strictEqual(PROMPT + greedy.text, decode([...promptIds, ...greedy.ids]), "the text shown decodes the ids");
    strictEqual(await page.locator("#transcript .generated").first().textContent(), greedy.text);
    const shown = Number(await page.locator("#transcript .tps").first().textContent());
    ok(shown > 0 && greedy.tokensPerSecond! > 0, `tokens/s shown: ${shown}`);

    // Stop: a long sampled run in q4g128, stopped from the button once it is under way.
    await loadFormat(page, "q4g128");
    await page.fill("#prompt", "Q: What do you call");
    await page.selectOption("#mode", "sample");
    await page.fill("#temperature", "1");
    await page.fill("#seed", "7");
    await page.fill("#maxTokens", "480");
    await page.click("#generate");
    await waitWhileProgressing(page, `globalThis.__chat.runs[1]?.ids.length >= 2`, "the sampled run's second token");
    await screenshot("chat-generating");
    const before = (await chatOf(page)).runs[1];
    await page.click("#stop");
    const stopped = await ended(page, 1);
    strictEqual(stopped.format, "q4g128");
    strictEqual(stopped.outcome, "stopped", `the sampled run ${stopped.outcome} after ${stopped.ids.length} ids`);
    ok(!stopped.ids.some((id) => eos.includes(id)), "no end-of-sequence came first");
    const queued = before.readEvery * before.inFlight;
    ok(
      stopped.ids.length <= before.ids.length + queued,
      `${before.ids.length} ids at the click, ${stopped.ids.length} at the end: at most ${queued} steps were queued`,
    );
    strictEqual(await page.textContent("#status"), `stopped after ${stopped.ids.length} tokens`);

    // The line constraint in q8, greedy after "Never trust a".
    await loadFormat(page, "q8");
    await page.fill("#prompt", "Never trust a");
    await page.selectOption("#mode", "greedy");
    await page.fill("#maxTokens", "48");
    await page.check("#constraint");
    await page.click("#generate");
    const line = await ended(page, 2);
    strictEqual(line.format, "q8");
    strictEqual(line.outcome, "eos", `the constrained run: ${line.outcome} ${line.error ?? ""}`);
    strictEqual(line.lineComplete, true, "the page found its line complete");
    const segments = chat.lineSegments;
    ok(segments.some((s) => s.kind === "enum") && segments.at(-1)!.kind === "freeText", "a demo with a choice");
    const codec = new SentencePieceTokenizer({
      ...tokenizer.model,
      normalizer: { ...tokenizer.model.normalizer, addDummyPrefix: false },
    });
    const constraint = new LineFormatConstraint(codec, { segments, eosTokenId: tokenizer.eosId! });
    line.ids.forEach((id, i) =>
      ok(constraint.nextAllowed(line.ids.slice(0, i)).has(id), `id ${i} (${id}) of [${line.ids}] is allowed`)
    );
    strictEqual(line.ids.at(-1), tokenizer.eosId);
    // The same line read as text: each segment in turn, the free text last.
    let rest = new TextDecoder().decode(new Uint8Array(line.ids.flatMap((id) => [...codec.tokenBytes(id)])));
    strictEqual(line.text, rest, "the text shown is the line's bytes");
    for (const segment of segments) {
      if (segment.kind === "freeText") {
        ok(new TextEncoder().encode(rest).length <= segment.maxLength, `free text ${JSON.stringify(rest)}`);
        ok(!segment.forbiddenChars.some((c) => rest.includes(c)), `free text ${JSON.stringify(rest)}`);
        rest = "";
      } else {
        const texts = segment.kind === "enum" ? segment.choices : [segment.text];
        const found = texts.find((t) => rest.startsWith(t));
        ok(found !== undefined, `${JSON.stringify(rest)} begins with one of ${JSON.stringify(texts)}`);
        rest = rest.slice(found.length);
      }
    }
    strictEqual(rest, "");

    // Device loss: a short greedy q8 run, then the device destroyed as a GPU reset would destroy it. The
    // next run fails naming the loss, the page loads the model on a new device by itself (engine.rebind,
    // no page reload), and the run after that gives the same ids.
    await page.uncheck("#constraint");
    await page.fill("#prompt", PROMPT);
    await page.fill("#maxTokens", "8");
    await page.click("#generate");
    const beforeLoss = await ended(page, 3);
    ok(beforeLoss.outcome === "eos" || beforeLoss.outcome === "max-tokens", `before the loss: ${beforeLoss.outcome}`);
    await page.evaluate(() => (globalThis as unknown as { __chat: { loseDevice(): void } }).__chat.loseDevice());
    await page.click("#generate");
    const lost = await ended(page, 4);
    strictEqual(lost.outcome, "device-lost", `the run on the lost device: ${lost.outcome} ${lost.error ?? ""}`);
    ok(/^device lost: /.test(lost.error ?? ""), lost.error);
    await waitWhileProgressing(page, `globalThis.__chat.state !== "loading"`, "the model on a new device");
    const recovered = await chatOf(page);
    strictEqual(recovered.state, "ready", `after the loss: ${await page.textContent("#status")}`);
    ok(recovered.loads.some((l) => l.stage === "rebind" && l.format === "q8"), "rebound in the format it had");
    await page.click("#generate");
    const afterLoss = await ended(page, 5);
    deepStrictEqual(afterLoss.ids, beforeLoss.ids, "the same greedy ids on the new device");

    for (const r of [greedy, stopped, line]) {
      console.log(`page, ${chat.adapter}, ${r.format}: ${r.tokensPerSecond} tokens/s over ${r.ids.length} ids`);
    }
    console.log(`constrained line: ${JSON.stringify(line.prompt + line.text)}`);
    await screenshot("chat");
    deepStrictEqual(consoleErrors, []);
    deepStrictEqual(consoleWarnings, []);
  },
);
