import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { gpuTest } from "../harness/testing.ts";
import { SentencePieceTokenizer } from "./tokenizer/sentencepiece.ts";

const MODEL = new URL("../models/fortune/", import.meta.url).pathname;

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
