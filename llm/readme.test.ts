/**
 * README's "Generating text" lines run as written (a user's program, importing the package by its
 * name) and print the greedy continuation the reference forward gives for the same checkpoint,
 * format and prompt.
 */
import { deepStrictEqual } from "node:assert/strict";
import { gpuTest } from "../harness/testing.ts";
import { LlamaReference } from "./engine/reference.ts";
import { parseLlamaConfig } from "./config.ts";
import { openCheckpointDir } from "./safetensors_file.ts";

const root = new URL("../", import.meta.url);

gpuTest("README: the generation lines print the reference's greedy continuation", async () => {
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
    const printed = stdout.trim().split("\n").map(Number);
    const dir = new URL("llm/fixtures/tiny-gqa/f32/", root).pathname;
    const { store, close } = await openCheckpointDir(dir);
    try {
      const config = parseLlamaConfig(await Deno.readTextFile(`${dir}config.json`));
      const reference = await LlamaReference.load(store, config, "q8");
      deepStrictEqual(printed, reference.greedy([5, 6, 7], 16));
    } finally {
      close();
    }
  } finally {
    await Deno.remove(file);
  }
});
