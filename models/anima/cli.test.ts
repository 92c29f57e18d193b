import { deepStrictEqual } from "node:assert/strict";
import { assertThrowsMessage } from "../../harness/testing.ts";
import { parseCliArgs } from "./cli.ts";

const required = ["--dit", "d", "--vae", "v", "--qwen3", "q", "--t5", "t", "--prompt", "a cat", "--out", "o.png"];

Deno.test("anima cli: options parsed by name; a missing, unknown or valueless one refused by name", async () => {
  const flags = parseCliArgs([...required, "--cfg", "4.5", "--negative", ""]) as Map<string, string>;
  deepStrictEqual([flags.get("prompt"), flags.get("cfg"), flags.get("negative")], ["a cat", "4.5", ""]);
  deepStrictEqual(parseCliArgs(["--help"]), "help");
  await assertThrowsMessage(() => parseCliArgs([...required, "--model", "m"]), "unknown option --model");
  await assertThrowsMessage(() => parseCliArgs(required.slice(2)), "--dit is required");
  await assertThrowsMessage(() => parseCliArgs([...required, "--steps"]), "--steps needs a value");
  await assertThrowsMessage(() => parseCliArgs([...required, "extra"]), 'unexpected argument "extra"');
});
