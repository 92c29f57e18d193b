import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { assertThrowsMessage } from "../harness/testing.ts";
import { numberFlag, parseBytes, parseCliFlags } from "./cli.ts";

const spec = { valued: ["out", "steps", "cfg"], required: ["out"], usage: "usage: test" };

Deno.test("models cli: options by name; unknown, valueless, missing and positional ones refused with the usage", async () => {
  deepStrictEqual(parseCliFlags(["--out", "a.png", "--cfg", ""], spec), new Map([["out", "a.png"], ["cfg", ""]]));
  deepStrictEqual(parseCliFlags(["--steps", "x", "-h"], spec), "help");
  await assertThrowsMessage(
    () => parseCliFlags(["--out", "o", "--seed", "1"], spec),
    "unknown option --seed\nusage: test",
  );
  await assertThrowsMessage(() => parseCliFlags(["--out"], spec), "--out needs a value");
  await assertThrowsMessage(() => parseCliFlags(["--steps", "3"], spec), "--out is required");
  await assertThrowsMessage(() => parseCliFlags(["--out", "o", "x"], spec), 'unexpected argument "x"');
});

Deno.test("models cli: numbers and byte counts, refused by option name", async () => {
  const flags = new Map([["steps", "3"], ["cfg", "4.5"], ["bad", "3.5"], ["empty", " "]]);
  deepStrictEqual([numberFlag(flags, "steps", true), numberFlag(flags, "cfg", false)], [3, 4.5]);
  strictEqual(numberFlag(flags, "seed", true), undefined);
  await assertThrowsMessage(() => numberFlag(flags, "bad", true), '--bad must be an integer, got "3.5"');
  await assertThrowsMessage(() => numberFlag(flags, "empty", false), '--empty must be a number, got " "');
  strictEqual(parseBytes("4GiB"), 4 * 2 ** 30);
  strictEqual(parseBytes("1.5 MiB"), 1.5 * 2 ** 20);
  strictEqual(parseBytes("123"), 123);
  await assertThrowsMessage(
    () => parseBytes("4GB"),
    '--max-resident must be bytes, e.g. 4294967296 or 4GiB, got "4GB"',
  );
});
