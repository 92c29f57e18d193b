import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { gpuTest } from "../../harness/testing.ts";
import { parseLlamaConfig } from "../llama/config.ts";
import { LlamaEngine } from "../llama/engine.ts";
import { perplexity } from "../../llm/perplexity.ts";
import { openCheckpointDir } from "../../llm/safetensors_file.ts";
import { SentencePieceTokenizer } from "../../llm/tokenizer/sentencepiece.ts";
import { WEIGHT_FORMATS } from "../../llm/weights/format.ts";
import { heldoutWindows, readHeldout } from "./evaluate.ts";

const DIR = new URL(".", import.meta.url).pathname;
const tokenizer = () => Deno.readFile(`${DIR}tokenizer.model`).then((b) => new SentencePieceTokenizer(b));

/** torch's greedy runs (greedy.json): prompt ids with BOS, 32 greedy ids, the smallest top-1 minus top-2 gap. */
interface GreedyRun {
  prompt: string;
  ids: number[];
  greedy: number[];
  minMargin: number;
}

/**
 * A window's NLL (hundreds of nats) agrees with torch's to this fraction. Measured on llvmpipe: at
 * most 7e-8 for each format (f32 sums in another order than torch's; the quantised formats read
 * the same dequantised values torch was given).
 */
const NLL_TOLERANCE = 1e-5;

/**
 * Greedy choices are compared where torch's top-1 led its top-2 by at least this much (logits here
 * differ from torch's by about 1e-5); a prompt with a closer call is left out.
 */
const MARGIN = 5e-3;

Deno.test("fortune model: our tokenizer encodes and decodes every held-out fortune as sentencepiece does", async () => {
  const sp = await tokenizer();
  const { heldout, docs } = await readHeldout();
  assertEquals(docs.length, heldout.docIds.length);
  docs.forEach((doc, i) => {
    assertEquals(sp.encode(doc), heldout.docIds[i], `document ${i}`);
    assertEquals(sp.decode(heldout.docIds[i]), doc, `document ${i}`);
  });
});

gpuTest("fortune model: f32 on the GPU generates torch's greedy continuation of each prompt", async (gpu) => {
  const runs = JSON.parse(await Deno.readTextFile(`${DIR}greedy.json`)) as GreedyRun[];
  const sp = await tokenizer();
  const config = parseLlamaConfig(await Deno.readTextFile(`${DIR}config.json`));
  const { store, close } = await openCheckpointDir(DIR);
  // torch's runs went on past an end-of-sequence id; so does this one.
  const engine = await LlamaEngine.load(gpu, store, { ...config, eosTokenIds: [] }, { maxSeq: 64 });
  close();
  try {
    const compared = runs.filter((r) => r.minMargin >= MARGIN);
    assert(compared.length >= 3, `only ${compared.length} prompts clear the margin`);
    for (const run of compared) {
      assertEquals([sp.bosId!, ...sp.encode(run.prompt)], run.ids, run.prompt);
      const ids: number[] = [];
      for await (const id of engine.generate(run.ids, { maxTokens: run.greedy.length })) ids.push(id);
      assertEquals(ids, run.greedy, run.prompt);
    }
  } finally {
    engine.destroy();
  }
});

gpuTest("fortune model: held-out NLL of the first two windows equals torch's, for every format", async (gpu) => {
  const sp = await tokenizer();
  const { heldout, docs } = await readHeldout();
  const windows = heldoutWindows(heldout, docs.slice(0, 12).map((d) => sp.encode(d))).slice(0, 2);
  assert(windows.length === 2 && windows[1].length === heldout.window, "twelve fortunes fill two windows");
  const config = parseLlamaConfig(await Deno.readTextFile(`${DIR}config.json`));
  for (const format of WEIGHT_FORMATS) {
    const { store, close } = await openCheckpointDir(DIR);
    const engine = await LlamaEngine.load(gpu, store, config, { format, maxSeq: heldout.window });
    close();
    try {
      const { windowNll } = await perplexity(engine, windows);
      windowNll.forEach((nll, i) => {
        const expected = heldout.torch[format].windowNll[i];
        assert(
          Math.abs(nll - expected) <= NLL_TOLERANCE * expected,
          `${format}, window ${i}: NLL ${nll} vs torch's ${expected}`,
        );
      });
    } finally {
      engine.destroy();
    }
  }
});

Deno.test("fortune CLIs: evaluate.ts and dp4a_accuracy.ts answer --help and refuse a bad option by name", async () => {
  const run = async (file: string, ...args: string[]) => {
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", `${DIR}${file}`, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code, out: new TextDecoder().decode(stdout), err: new TextDecoder().decode(stderr) };
  };
  for (
    const [file, options] of [["evaluate.ts", ["formats", "windows", "out"]], [
      "dp4a_accuracy.ts",
      ["windows", "runs", "no-fixtures", "out"],
    ]] as const
  ) {
    const help = await run(file, "--help");
    assertEquals([help.code, help.err], [0, ""], file);
    assert(help.out.startsWith(`usage: deno run -A models/fortune/${file}`), help.out);
    for (const option of options) assert(help.out.includes(`  --${option} `), `${file} --help lists --${option}`);
    const name = file.replace(".ts", "");
    // A misspelt option was ignored and a bad count read as NaN windows (none evaluated): both refused.
    const cases: [string[], string][] = [[["--window", "3"], "--window"], [["--windows", "x"], "--windows must be"]];
    for (const [args, message] of cases) {
      const bad = await run(file, ...args);
      assertEquals(bad.code, 2, `${file} ${args.join(" ")}`);
      assert(bad.err.startsWith(`${name}: `) && bad.err.includes(message), bad.err);
      assert(!bad.err.includes("    at "), `no stack trace: ${bad.err}`);
    }
  }
});
