/**
 * README's "Generating text" lines run as written (a user's program, importing the package by its
 * name) and print the text of torch's greedy continuation of the same prompt on the same model
 * (`models/fortune/greedy.json`), decoded whole: the streamed decoding the lines show gives the
 * same text as decoding every id at once.
 */
import { deepStrictEqual } from "node:assert/strict";
import { gpuTest } from "../../harness/testing.ts";
import { SentencePieceTokenizer } from "../../llm/tokenizer/sentencepiece.ts";

const root = new URL("../../", import.meta.url);

gpuTest("README: the generation lines print torch's greedy continuation, decoded as a whole", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", root));
  const code = /## Generating text\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!code) throw new Error("README has no ts block under Generating text");
  // Inside the repository, so that Deno resolves @xpu/ops to the working tree as it would the package.
  const file = new URL(`.readme_generate_${Deno.pid}.ts`, root);
  await Deno.writeTextFile(file, code);
  try {
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", file.pathname],
      cwd: root.pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(run.stdout);
    if (!run.success) throw new Error(`the README lines failed: ${new TextDecoder().decode(run.stderr)}`);
    const model = new URL("models/fortune/", root);
    const tokenizer = new SentencePieceTokenizer(await Deno.readFile(new URL("tokenizer.model", model)));
    const runs = JSON.parse(await Deno.readTextFile(new URL("greedy.json", model))) as {
      prompt: string;
      greedy: number[];
    }[];
    const torch = runs.find((r) => r.prompt === "A computer is")!.greedy.slice(0, 16);
    const eos = torch.indexOf(tokenizer.eosId!);
    const generated = eos < 0 ? torch : torch.slice(0, eos);
    const prompt = tokenizer.encode("A computer is");
    const expected = tokenizer.decode([...prompt, ...generated]).slice(tokenizer.decode(prompt).length);
    deepStrictEqual(stdout, expected);
  } finally {
    await Deno.remove(file);
  }
});
