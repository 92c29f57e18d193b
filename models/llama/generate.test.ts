import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { gpuTest } from "../../harness/testing.ts";
import { convertCheckpoint } from "./convert.ts";
import { SentencePieceTokenizer } from "../../llm/tokenizer/sentencepiece.ts";

const MODEL = new URL("../fortune/", import.meta.url).pathname;

async function generate(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./generate.ts", import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code, stdout: text.decode(stdout), stderr: text.decode(stderr) };
}

gpuTest("deno task generate: prints the prompt and torch's greedy continuation, up to end-of-sequence", async () => {
  const runs = JSON.parse(await Deno.readTextFile(`${MODEL}greedy.json`)) as { prompt: string; greedy: number[] }[];
  const run = runs.find((r) => r.prompt === "A computer is")!;
  const sp = new SentencePieceTokenizer(await Deno.readFile(`${MODEL}tokenizer.model`));
  const eos = run.greedy.indexOf(sp.eosId!);
  const generated = eos < 0 ? run.greedy : run.greedy.slice(0, eos);
  const { code, stdout, stderr } = await generate(run.prompt, "--max-tokens", "32");
  assertEquals(code, 0, stderr);
  assertEquals(stdout, sp.decode([...sp.encode(run.prompt), ...generated]) + "\n");
});

Deno.test("deno task generate: a bad option is named, with the usage, exit code 2", async () => {
  const { code, stderr } = await generate("hello", "--format", "q5");
  assertEquals(code, 2);
  assertEquals(stderr.trim(), 'generate: --format must be one of f32, q8, q4g128, got "q5"');
  const unknown = await generate("hello", "--top_k", "3");
  assertEquals(unknown.stderr.split("\n")[0], "generate: unknown option --top_k");
});

Deno.test("deno task generate --help: the usage on stdout, exit code 0", async () => {
  const { code, stdout } = await generate("--help");
  assertEquals(code, 0);
  assertEquals(stdout.split("\n")[0], 'usage: deno task generate "prompt" [options]');
});

gpuTest("deno task generate: a converted directory loads in its own format with its own tokenizer", async () => {
  const out = await Deno.makeTempDir();
  try {
    await convertCheckpoint(MODEL, out, "q8");
    for (const name of ["tokenizer.model", "generation_config.json"]) {
      assertEquals(await Deno.readFile(`${out}/${name}`), await Deno.readFile(`${MODEL}${name}`), name);
    }
    const converted = await generate("A computer is", "--model", out, "--max-tokens", "12");
    const onLoad = await generate("A computer is", "--format", "q8", "--max-tokens", "12");
    assertEquals([converted.code, onLoad.code], [0, 0], converted.stderr + onLoad.stderr);
    assertEquals(converted.stdout, onLoad.stdout, "the converted q8 file gives the text quantise-on-load gives");
    assertEquals(/model [^\n]*, q8;/.test(converted.stderr), true, converted.stderr);
    const refused = await generate("A computer is", "--model", out, "--format", "f32");
    assertEquals(refused.code, 2);
    assertEquals(
      refused.stderr.trim().split("\n").at(-1), // after whatever the adapter's driver printed
      "generate: weights: the checkpoint is converted to q8; it cannot be loaded as f32",
    );
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("deno task generate: a bad count or sampler setting is named by its option before the model loads", async () => {
  for (
    const [args, message] of [
      [["--max-tokens", "-3"], 'generate: --max-tokens must be an integer >= 1, got "-3"'],
      [["--temperature", "-1"], "generate: --temperature must be finite and > 0 in f32, got -1"],
      [["--temperature", "1", "--top-k", "0"], "generate: --top-k must be an integer in [1, 2^32), got 0"],
      [["--temperature", "1", "--top-p", "2"], "generate: --top-p must be in (0, 1], got 2"],
      [["--top-k", "5"], "generate: --top-k needs --temperature (without it the choice is greedy)"],
    ] as const
  ) {
    const { code, stderr } = await generate("hello", ...args);
    assertEquals(code, 2, stderr);
    // Exactly the message: nothing of the load (its progress lines, the adapter) came before it.
    assertEquals(stderr.trim(), message);
  }
});
