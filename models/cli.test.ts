import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { assertThrowsMessage } from "../harness/testing.ts";
import { checkPath, choiceFlag, numberFlag, parseBytes, parseCliFlags } from "./cli.ts";

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

Deno.test("models cli: numbers with their ranges, choices and byte counts, refused by option name", async () => {
  const flags = new Map([
    ["steps", "3"],
    ["cfg", "4.5"],
    ["bad", "3.5"],
    ["empty", " "],
    ["inf", "Infinity"],
    ["zero", "0"],
    ["format", "q5"],
  ]);
  deepStrictEqual([numberFlag(flags, "steps", true), numberFlag(flags, "cfg", false)], [3, 4.5]);
  strictEqual(numberFlag(flags, "seed", true), undefined);
  await assertThrowsMessage(() => numberFlag(flags, "bad", true), '--bad must be an integer, got "3.5"');
  await assertThrowsMessage(() => numberFlag(flags, "empty", false), '--empty must be a finite number, got " "');
  await assertThrowsMessage(() => numberFlag(flags, "inf", false), '--inf must be a finite number, got "Infinity"');
  // The bounds are inclusive for min and max, exclusive for above.
  deepStrictEqual(
    [numberFlag(flags, "steps", true, { min: 3, max: 3 }), numberFlag(flags, "zero", false, { min: 0 })],
    [3, 0],
  );
  await assertThrowsMessage(
    () => numberFlag(flags, "steps", true, { min: 1, max: 2 }),
    '--steps must be an integer in [1, 2], got "3"',
  );
  await assertThrowsMessage(
    () => numberFlag(flags, "steps", true, { min: 4 }),
    '--steps must be an integer >= 4, got "3"',
  );
  await assertThrowsMessage(
    () => numberFlag(flags, "steps", true, { max: 2 }),
    '--steps must be an integer <= 2, got "3"',
  );
  await assertThrowsMessage(
    () => numberFlag(flags, "zero", false, { above: 0 }),
    '--zero must be a finite number > 0, got "0"',
  );
  strictEqual(choiceFlag(flags, "cfg", ["4.5"]), "4.5");
  strictEqual(choiceFlag(flags, "absent", ["f32"]), undefined);
  await assertThrowsMessage(
    () => choiceFlag(flags, "format", ["f32", "q8"]),
    '--format must be one of f32, q8, got "q5"',
  );
  strictEqual(parseBytes("4GiB"), 4 * 2 ** 30);
  strictEqual(parseBytes("1.5 MiB"), 1.5 * 2 ** 20);
  strictEqual(parseBytes("123"), 123);
  strictEqual(parseBytes("1"), 1);
  for (const bad of ["4GB", "0", "0.4", "-1", ""]) {
    await assertThrowsMessage(
      () => parseBytes(bad),
      `--max-resident must be bytes >= 1, e.g. 4294967296 or 4GiB, got "${bad}"`,
    );
  }
});

Deno.test("models cli: paths checked by option name: a file, a directory, a file to write in an existing directory", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/f.txt`, "x");
    await checkPath("t5", `${dir}/f.txt`, "file");
    await checkPath("model", dir, "directory");
    await checkPath("out", `${dir}/new.png`, "output");
    await checkPath("out", `${dir}/f.txt`, "output"); // an existing file is overwritten
    await assertThrowsMessage(() => checkPath("t5", `${dir}/g.txt`, "file"), `--t5: no file ${dir}/g.txt`);
    await assertThrowsMessage(() => checkPath("t5", dir, "file"), `--t5: no file ${dir} (it is a directory)`);
    await assertThrowsMessage(
      () => checkPath("model", `${dir}/f.txt`, "directory"),
      `--model: no directory ${dir}/f.txt (it is a file)`,
    );
    await assertThrowsMessage(
      () => checkPath("out", `${dir}/sub/a.png`, "output"),
      `--out: the directory ${dir}/sub of ${dir}/sub/a.png does not exist`,
    );
    await assertThrowsMessage(
      () => checkPath("out", dir, "output"),
      `--out: ${dir} is a directory, not a file to write`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
